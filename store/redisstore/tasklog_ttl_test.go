package redisstore_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// TestRunLogsGetTheirTTLOnlyWhenLogged ends runs whose first task logged
// a line and runs that logged none, on a real redis-server, each way a
// finish ends a run: a one-task run through the finish's fast path, a
// chain through the cached path, and a cancel. A run that logged has its
// log hash expire with it (the run's field tl told its end to); one that
// did not has no log hash, and its end sent no PEXPIRE for one. It fails
// if the end skips the log hash of a run that logged (the log would stay
// until the janitor) or if the mark is not written by the first append.
func TestRunLogsGetTheirTTLOnlyWhenLogged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	succeed := func(t *testing.T, s *redisstore.Store, lease store.Lease, _ string) {
		for lease.Task != "" {
			res, err := s.TaskFinishClaim(ctx, &store.TaskFinishClaimParams{
				Finish: store.TaskFinishParams{WorkerID: "w", Outcomes: []store.TaskOutcome{{Lease: lease, Outcome: store.OutcomeSucceeded}}},
				Claim:  store.TaskClaimParams{WorkerID: "w", Limit: 1, LeaseDuration: time.Minute},
			})
			require.NoError(t, err)
			require.NoError(t, res.Finished[0].Err)
			lease = store.Lease{}
			if res.Claimed != nil && len(res.Claimed.Tasks) > 0 {
				lease = res.Claimed.Tasks[0].Lease
			}
		}
	}
	cancel := func(t *testing.T, s *redisstore.Store, _ store.Lease, id string) {
		_, err := s.RunCancel(ctx, &store.RunCancelParams{ID: id, Reason: "stop"})
		require.NoError(t, err)
	}
	cases := []struct {
		name  string
		tasks []store.TaskSpec
		end   func(t *testing.T, s *redisstore.Store, lease store.Lease, id string)
	}{
		{"OneTask", []store.TaskSpec{{Name: "a", Handler: "h"}}, succeed},
		{"Chain", []store.TaskSpec{{Name: "a", Handler: "h"}, {Name: "b", Handler: "h", Deps: []store.Dep{{Task: "a"}}}}, succeed},
		{"Cancelled", []store.TaskSpec{{Name: "a", Handler: "h"}}, cancel},
	}
	for _, c := range cases {
		for _, logged := range []bool{true, false} {
			name := c.name + "/Silent"
			if logged {
				name = c.name + "/Logged"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				s, client, prefix := leftStore(t, redisstore.WithRetention(time.Hour))
				res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: &store.WorkflowSpec{Name: "wf", Tasks: c.tasks}})
				require.NoError(t, err)
				id := res.Run.ID
				lease := claimAll(t, s)["a"]
				require.NotEmpty(t, lease.Task, "the root is claimed")
				if logged {
					got, err := s.TaskLogAppend(ctx, &store.TaskLogAppendParams{Lease: lease, Attempt: 1, Seq: 1,
						Lines: []store.LogLine{{Time: time.Now(), Level: slog.LevelInfo, Text: "hello"}}})
					require.NoError(t, err)
					require.Equal(t, 1, got.Stored)
				}
				c.end(t, s, lease, id)
				run, err := s.RunGet(ctx, &store.RunGetParams{ID: id})
				require.NoError(t, err)
				require.True(t, run.Status.Terminal(), "the run has ended")
				logKey := prefix + ":{0}:tl:" + id
				ttl := client.PTTL(ctx, logKey).Val()
				if logged {
					require.Positive(t, ttl, "the log hash of a run that logged expires with it")
				} else {
					require.Equal(t, time.Duration(-2), ttl, "a run that logged nothing has no log hash")
				}
				mark := client.HGet(ctx, prefix+":{0}:r:"+id, "tl").Val()
				require.Equal(t, logged, mark == "1", "the run's field tl says whether it has a log hash")
			})
		}
	}
}
