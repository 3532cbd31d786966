package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store"
	"github.com/plaitdag/plait/store/redisstore"
)

// BenchmarkWideJoinClaim measures the claim of the join of a 5,000-wide
// fan-in once every parent succeeded with a small result: with every
// result in the claim (inline=0) and with them left out
// (InlineResultsMax 64), and the read of all 5,000 results (TaskResults,
// in one call) that a handler wanting them all then makes: by name, and
// as the parents of the join.
//
//	go test -run '^$' -bench WideJoinClaim -benchtime 20x ./store/redisstore
func BenchmarkWideJoinClaim(b *testing.B) {
	if server.addr == "" {
		redistest.Skip(b, errString(server.missing))
	}
	const width = 5000
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: server.addr})
	b.Cleanup(func() { _ = c.Close() })
	s, err := redisstore.New(ctx, c, redisstore.WithLogger(quietLogger()),
		redisstore.WithPrefix("joinclaim"+strconv.FormatInt(prefixes.Add(1), 10)))
	require.NoError(b, err)
	names := make([]string, width)
	deps := make([]store.Dep, width)
	tasks := make([]store.TaskSpec, 0, width+1)
	for i := range names {
		names[i] = "p" + strconv.Itoa(i)
		deps[i] = store.Dep{Task: names[i]}
		tasks = append(tasks, store.TaskSpec{Name: names[i], Handler: "h", Queue: "leaves"})
	}
	tasks = append(tasks, store.TaskSpec{Name: "join", Handler: "h", Queue: "joins", Deps: deps})
	prepare := func() string {
		res, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: &store.WorkflowSpec{Name: "wide", Tasks: tasks}})
		require.NoError(b, err)
		for left := width; left > 0; {
			got, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Queues: []string{"leaves"}, Limit: 1000, LeaseDuration: time.Minute})
			require.NoError(b, err)
			var os []store.TaskOutcome
			for _, ct := range got.Tasks {
				os = append(os, store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded, Result: []byte(`"ok"`)})
			}
			_, err = s.TaskFinish(ctx, &store.TaskFinishParams{WorkerID: "w", Outcomes: os})
			require.NoError(b, err)
			left -= len(got.Tasks)
		}
		return res.Run.ID
	}
	for _, inline := range []int{0, 64} {
		b.Run("inline="+strconv.Itoa(inline), func(b *testing.B) {
			var spent time.Duration
			for i := 0; i < b.N; i++ {
				prepare()
				t0 := time.Now()
				got, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: "w", Queues: []string{"joins"}, Limit: 1, LeaseDuration: time.Minute, InlineResultsMax: inline})
				spent += time.Since(t0)
				require.NoError(b, err)
				require.Len(b, got.Tasks, 1)
			}
			b.ReportMetric(float64(spent.Microseconds())/float64(b.N)/1000, "ms/claim")
		})
	}
	// read-all names every parent; read-parents asks for the parents of
	// the join (ParentsOf), as Task.ParentResults(ctx) does for a join
	// claimed without them.
	for _, how := range []string{"read-all", "read-parents"} {
		b.Run(how, func(b *testing.B) {
			var spent time.Duration
			for i := 0; i < b.N; i++ {
				id := prepare()
				p := &store.TaskResultsParams{RunID: id, Tasks: names}
				if how == "read-parents" {
					p = &store.TaskResultsParams{RunID: id, ParentsOf: "join"}
				}
				t0 := time.Now()
				res, err := s.TaskResults(ctx, p)
				spent += time.Since(t0)
				require.NoError(b, err)
				require.Len(b, res.Results, width)
			}
			b.ReportMetric(float64(spent.Microseconds())/float64(b.N)/1000, "ms/read")
		})
	}
}
