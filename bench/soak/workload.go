package main

import (
	"context"
	"errors"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/plaitdag/plait"
)

// The soak's mixed load: four run shapes in turn, every task doing 20 to
// 300 ms of work (drawn from its run and name, so a re-run works as long:
// long enough that a killed worker is usually running some), one shape
// failing its first attempt one time in four to be retried.

// workflows are the run shapes, submitted in turn.
func workflows() []*plait.Workflow {
	single := plait.NewWorkflow("single").Task("a", "work", nil)
	chain := plait.NewWorkflow("chain").
		Task("a", "work", nil).
		Task("b", "work", nil, plait.After("a")).
		Task("c", "work", nil, plait.After("b"))
	fan := plait.NewWorkflow("fan").Task("root", "work", nil)
	var parts []string
	for i := 0; i < 4; i++ {
		name := "part" + strconv.Itoa(i)
		fan.Task(name, "work", nil, plait.After("root"))
		parts = append(parts, name)
	}
	fan.Task("join", "work", nil, plait.After(parts...))
	payload := make([]byte, 1024)
	for i := range payload {
		payload[i] = 'x'
	}
	flaky := plait.NewWorkflow("flaky").Task("a", "flaky", string(payload), plait.Retry(2))
	return []*plait.Workflow{single, chain, fan, flaky}
}

// spread answers a number in [0, n) drawn from a task's run and name.
func spread(t *plait.Task, n uint32) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(t.RunID))
	_, _ = h.Write([]byte(t.Name))
	return h.Sum32() % n
}

// work is the handler of most tasks: it works 20 to 300 ms, or until its
// context ends.
func work(ctx context.Context, t *plait.Task) (any, error) {
	d := time.Duration(20+spread(t, 281)) * time.Millisecond
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var errFlaky = errors.New("soak: a first attempt that fails")

// flaky fails the first attempt of one task in four, then works.
func flaky(ctx context.Context, t *plait.Task) (any, error) {
	if t.Attempt == 1 && spread(t, 4) == 0 {
		return nil, plait.RetryAfter(100*time.Millisecond, errFlaky)
	}
	return work(ctx, t)
}

// handle registers the soak's handlers on s.
func handle(s *plait.Scheduler) error {
	if err := s.Handle("work", work); err != nil {
		return err
	}
	return s.Handle("flaky", flaky)
}

// workerOptions are the options of every worker, in a process or not:
// short leases, so a killed worker's tasks come back within seconds.
func workerOptions(id string) []plait.Option {
	return []plait.Option{
		plait.WithWorkerID(id),
		plait.WithConcurrency(16),
		plait.WithLeaseDuration(6 * time.Second),
		plait.WithSweepInterval(time.Second),
		plait.WithShutdownTimeout(2 * time.Second),
	}
}
