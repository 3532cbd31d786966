package storetest

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// wideDAG is root -> n middle tasks -> join.
func wideDAG(n int) *store.WorkflowSpec {
	tasks := []store.TaskSpec{task("root")}
	join := task("join")
	for i := 0; i < n; i++ {
		name := "m" + strconv.Itoa(i)
		tasks = append(tasks, task(name, "root"))
		join.Deps = append(join.Deps, store.Dep{Task: name, On: store.OnSuccess})
	}
	return spec(store.StrategyContinue, append(tasks, join)...)
}

func testConcurrency(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "RacingWorkers",
			rule: "racing workers finish every task exactly once, release each child once and never hold one task twice",
			run: func(t *testing.T, h *Harness, rule string) {
				const runs, width, workers = 3, 100, 8
				var ids []string
				for i := 0; i < runs; i++ {
					ids = append(ids, createRun(t, h, &runOpts{Workflow: wideDAG(width)}).ID)
				}
				total := int64(runs * (width + 2))

				var (
					mu       sync.Mutex
					holders  = map[string]string{} // run/task -> worker holding it
					claims   = map[string]int{}
					released = map[string]int{}
					success  = map[string]int{}
					problems []string
					done     atomic.Int64
					nclaims  atomic.Int64
					wg       sync.WaitGroup
				)
				problem := func(format string, args ...any) {
					mu.Lock()
					problems = append(problems, fmt.Sprintf(format, args...))
					mu.Unlock()
				}
				for w := 0; w < workers; w++ {
					worker := "w" + strconv.Itoa(w)
					wg.Add(1)
					go func() {
						defer wg.Done()
						for done.Load() < total {
							res, err := h.Store.TaskClaim(bg, &store.TaskClaimParams{WorkerID: worker, Limit: 4, LeaseDuration: time.Hour})
							if err != nil {
								problem("claim: %v", err)
								return
							}
							if len(res.Tasks) == 0 {
								if err := h.Store.ReadyWait(bg, &store.ReadyWaitParams{Timeout: 5 * time.Millisecond}); err != nil {
									problem("ready wait: %v", err)
									return
								}
								continue
							}
							var outcomes []store.TaskOutcome
							mu.Lock()
							for _, ct := range res.Tasks {
								key := ct.Lease.RunID + "/" + ct.Lease.Task
								if other, ok := holders[key]; ok {
									problems = append(problems, fmt.Sprintf("%s claimed by %s while %s held it", key, worker, other))
								}
								holders[key] = worker
								claims[key]++
								o := store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded, Result: []byte(key)}
								// Every fifth claim is handed back once, to race re-claims too.
								if nclaims.Add(1)%5 == 0 && released[key] == 0 {
									o.Outcome = store.OutcomeReleased
									released[key]++
								}
								outcomes = append(outcomes, o)
							}
							for _, o := range outcomes {
								delete(holders, o.Lease.RunID+"/"+o.Lease.Task)
							}
							mu.Unlock()
							out, err := h.Store.TaskFinish(bg, &store.TaskFinishParams{WorkerID: worker, Outcomes: outcomes})
							if err != nil {
								problem("finish: %v", err)
								return
							}
							for i, r := range out {
								if r.Err != nil {
									problem("finish %v: %v", outcomes[i].Lease, r.Err)
									continue
								}
								if outcomes[i].Outcome == store.OutcomeSucceeded {
									mu.Lock()
									success[outcomes[i].Lease.RunID+"/"+outcomes[i].Lease.Task]++
									mu.Unlock()
									done.Add(1)
								}
							}
						}
					}()
				}
				wg.Wait()
				require.Empty(t, problems, rule)
				require.Len(t, success, int(total), rule)
				for key, n := range success {
					require.Equal(t, 1, n, rule+": "+key)
					require.Equal(t, 1+released[key], claims[key], rule+": "+key)
				}
				for _, id := range ids {
					run := getRun(t, h, id)
					require.Equal(t, store.RunCompleted, run.Status, rule)
					require.Equal(t, width+2, run.Succeeded, rule)
					for _, ti := range run.Tasks {
						require.Equal(t, store.TaskSucceeded, ti.Status, rule)
						require.Equal(t, 1, ti.Attempt, rule)
						require.Len(t, ti.Attempts, 1+released[id+"/"+ti.Name], rule)
					}
				}
				claimNone(t, h, rule)
			},
		},
		{
			name: "RacingClaims",
			rule: "racing claims hand out each ready task to exactly one worker",
			run: func(t *testing.T, h *Harness, rule string) {
				const n, workers = 120, 8
				var tasks []store.TaskSpec
				for i := 0; i < n; i++ {
					tasks = append(tasks, task("t"+strconv.Itoa(i)))
				}
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, tasks...)})
				var (
					mu   sync.Mutex
					seen = map[string]int{}
					errs []error
					wg   sync.WaitGroup
				)
				for w := 0; w < workers; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							res, err := h.Store.TaskClaim(bg, &store.TaskClaimParams{WorkerID: "w", Limit: 3, LeaseDuration: time.Hour})
							mu.Lock()
							if err != nil {
								errs = append(errs, err)
							}
							for _, ct := range tasksOf(res) {
								seen[ct.Lease.Task]++
							}
							mu.Unlock()
							if err != nil || len(tasksOf(res)) == 0 {
								return
							}
						}
					}()
				}
				wg.Wait()
				require.Empty(t, errs, rule)
				require.Len(t, seen, n, rule)
				for name, c := range seen {
					require.Equal(t, 1, c, rule+": "+name)
				}
			},
		},
		{
			name: "RacingFinishes",
			rule: "racing finishes of one lease apply exactly once and release the child once",
			run: func(t *testing.T, h *Harness, rule string) {
				r := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b", "a"))})
				ct := claimOne(t, h, "a", rule)
				const racers = 8
				results := make(chan error, racers)
				var wg sync.WaitGroup
				for i := 0; i < racers; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						out, err := h.Store.TaskFinish(bg, &store.TaskFinishParams{WorkerID: defaultWorker, Outcomes: []store.TaskOutcome{{Lease: ct.Lease, Outcome: store.OutcomeSucceeded}}})
						if err != nil {
							results <- err
							return
						}
						results <- out[0].Err
					}()
				}
				wg.Wait()
				close(results)
				applied := 0
				for err := range results {
					if err == nil {
						applied++
						continue
					}
					require.True(t, errors.Is(err, store.ErrStaleEpoch), rule)
				}
				require.Equal(t, 1, applied, rule)
				got := getRun(t, h, r.ID)
				require.Equal(t, 1, got.Succeeded, rule)
				require.Len(t, got.Task("a").Attempts, 1, rule)
				claimOne(t, h, "b", rule)
				claimNone(t, h, rule)
			},
		},
	})
}

// tasksOf returns the claimed tasks of a possibly nil claim answer.
func tasksOf(res *store.TaskClaimResult) []*store.ClaimedTask {
	if res == nil {
		return nil
	}
	return res.Tasks
}
