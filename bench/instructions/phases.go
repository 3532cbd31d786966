package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store"
)

// payloadSize is every task's payload, as in the bench's workloads.
const payloadSize = 100

// batch is how many tasks a batched worker claims and finishes per call,
// and how many runs one SubmitMany call carries.
const batch = 64

// warmup is how many of its own operations a phase without a setup of
// that kind runs uncounted first, so that the counted ones start where
// their own kind left the server (the client's connection, Lua's heap).
const warmup = 8

// phase is one measured step of the hot path.
type phase struct {
	name  string // for -only and the JSON
	title string // the table's row
	unit  string // what one operation is
	ops   int    // operations at -n 1
	run   func(ctx context.Context, e *env, ph phase, ops int) (result, error)
}

// result is one phase's measurement.
type result struct {
	Phase   string  `json:"phase"`
	Unit    string  `json:"unit"`
	Ops     int     `json:"ops"`
	IrPerOp float64 `json:"ir_per_op"`
	// FcallPerOp is the number of FCALLs (store calls) per operation, from
	// INFO commandstats: a check that each phase sent the calls it meant.
	FcallPerOp float64 `json:"fcall_per_op"`
	// CronIr is what serverCron executed during the phase, left out of
	// IrPerOp.
	CronIr  float64 `json:"cron_ir"`
	Seconds float64 `json:"seconds"`
}

var phases = []phase{
	{"submit", "submit: `Submit` of a one-task run", "run", 2000, phaseSubmit},
	{"batch", "claim+finish, 64 per call (`TaskFinishClaim`)", "task", 4096, phaseBatch},
	{"single", "claim+finish, one per call (`TaskFinishClaim`)", "task", 1000, phaseSingle},
	{"chain", "chain hop (`Run` of a 200-task chain, concurrency 1)", "hop", 1000, phaseChain},
	{"empty", "empty claim (`TaskClaim`, limit 64)", "call", 1000, phaseEmpty},
	{"many", "`SubmitMany`, 64 one-task runs per call", "run", 2048, phaseMany},
	{"progress", "progress reports, 64 per call (`TaskProgress`), off the hot path", "report", 2048, phaseProgress},
	{"extend", "lease extensions, 64 per call (`LeaseExtend`), of long tasks", "lease", 2048, phaseExtend},
}

// phaseSubmit: one-task runs, one Submit each, from one goroutine.
func phaseSubmit(ctx context.Context, e *env, ph phase, ops int) (result, error) {
	p, err := e.open(ctx)
	if err != nil {
		return result{}, err
	}
	defer p.client.Close()
	submit := func(n int) error {
		for i := 0; i < n; i++ {
			if _, err := p.Submit(ctx, e.oneTask()); err != nil {
				return err
			}
		}
		return nil
	}
	if err := submit(warmup); err != nil {
		return result{}, err
	}
	return e.count(ctx, ph, ops, func() error { return submit(ops) })
}

// phaseMany: one-task runs, batch per SubmitMany call.
func phaseMany(ctx context.Context, e *env, ph phase, ops int) (result, error) {
	p, err := e.open(ctx)
	if err != nil {
		return result{}, err
	}
	defer p.client.Close()
	if err := e.submitMany(ctx, p.sched, batch); err != nil {
		return result{}, err
	}
	ops = max(batch, ops/batch*batch) // whole calls only
	return e.count(ctx, ph, ops, func() error { return e.submitMany(ctx, p.sched, ops) })
}

func phaseBatch(ctx context.Context, e *env, ph phase, ops int) (result, error) {
	return e.claimFinish(ctx, ph, ops, batch)
}

func phaseSingle(ctx context.Context, e *env, ph phase, ops int) (result, error) {
	return e.claimFinish(ctx, ph, ops, 1)
}

// claimFinish counts the store calls a busy worker with perCall handler
// slots sends for ops one-task runs: a claim, then calls that each hand
// back the tasks the previous one claimed and claim as many again
// (TaskFinishClaim), the last of them finding the queue empty. A running
// worker sends the same calls, but how many tasks each carries depends on
// timing (its two drivers split the batches), so the phase sends them
// itself, with the parameters the worker sends.
func (e *env) claimFinish(ctx context.Context, ph phase, ops, perCall int) (result, error) {
	p, err := e.open(ctx)
	if err != nil {
		return result{}, err
	}
	defer p.client.Close()
	if err := e.submitMany(ctx, p.sched, ops); err != nil {
		return result{}, err
	}
	seq := 0
	claim := func(limit int) store.TaskClaimParams {
		seq++
		return workerClaim(p.NodeID(), limit, "bench."+strconv.Itoa(seq))
	}
	return e.count(ctx, ph, ops, func() error {
		first := claim(perCall)
		res, err := p.store.TaskClaim(ctx, &first)
		if err != nil {
			return err
		}
		held, done := res.Tasks, 0
		for len(held) > 0 {
			params := &store.TaskFinishClaimParams{
				Finish: store.TaskFinishParams{WorkerID: p.NodeID(), Outcomes: make([]store.TaskOutcome, len(held))},
				Claim:  claim(perCall),
			}
			for i, t := range held {
				params.Finish.Outcomes[i] = store.TaskOutcome{Lease: t.Lease, Outcome: store.OutcomeSucceeded}
			}
			res, err := p.store.TaskFinishClaim(ctx, params)
			if err != nil {
				return err
			}
			for i, f := range res.Finished {
				if f.Err != nil {
					return fmt.Errorf("finish %s: %w", held[i].Lease.RunID, f.Err)
				}
			}
			done += len(held)
			held = res.Claimed.Tasks
		}
		if done != ops {
			return fmt.Errorf("finished %d of %d tasks", done, ops)
		}
		return nil
	})
}

// workerClaim is the claim a worker sends (see the Scheduler's claimParams):
// the default queue, the handlers it runs (the Redis store routes claims
// by handler), parents' results inline.
func workerClaim(worker string, limit int, requestID string) store.TaskClaimParams {
	return store.TaskClaimParams{
		WorkerID:         worker,
		Queues:           []string{plait.DefaultQueue},
		Limit:            limit,
		LeaseDuration:    plait.LeaseDurationDefault,
		RequestID:        requestID,
		Handlers:         []string{"noop"},
		InlineResultsMax: plait.InlineResultsDefault,
	}
}

// chainLen is the length of each chain: the run record a hop reads grows
// with its tasks, so -n scales the number of chains, never their length.
const chainLen = 200

// phaseChain: chains of chainLen tasks, each After the previous, one after
// the other: each is submitted uncounted, then one worker (one handler
// slot, no claiming ahead) is started and counted until the chain's last
// task has succeeded. A hop is one task's finish and its child's claim, in
// one call; the figure is per task, since the root's claim and the last
// task's finish make up the hop a chain lacks.
func phaseChain(ctx context.Context, e *env, ph phase, ops int) (result, error) {
	chains := max(1, (ops+chainLen/2)/chainLen)
	p, err := e.open(ctx, plait.WithConcurrency(1), plait.WithPrefetch(0))
	if err != nil {
		return result{}, err
	}
	defer p.client.Close()
	wf := plait.NewWorkflow("chain")
	for i := 0; i < chainLen; i++ {
		var opts []plait.TaskOption
		if i > 0 {
			opts = append(opts, plait.After("c"+strconv.Itoa(i-1)))
		}
		wf.Task("c"+strconv.Itoa(i), "noop", e.payload, opts...)
	}
	var t tally
	for c := 0; c < chains; c++ {
		if _, err := p.Submit(ctx, wf); err != nil {
			return result{}, err
		}
		name := ph.name + "." + strconv.Itoa(c+1)
		if err := p.runUntil(ctx, chainLen, func(run func() error) error { return e.measure(ctx, name, &t, run) }); err != nil {
			return result{}, err
		}
	}
	return t.result(ph, chains*chainLen), nil
}

// phaseEmpty: claims on empty queues, sent to the store directly (a
// running worker blocks on the store's wake-up instead), as an idle worker
// of 64 slots sends them.
func phaseEmpty(ctx context.Context, e *env, ph phase, ops int) (result, error) {
	p, err := e.open(ctx)
	if err != nil {
		return result{}, err
	}
	defer p.client.Close()
	seq := 0
	claim := func(n int) error {
		for i := 0; i < n; i++ {
			seq++
			params := workerClaim(p.NodeID(), batch, "empty."+strconv.Itoa(seq))
			res, err := p.store.TaskClaim(ctx, &params)
			if err != nil {
				return err
			}
			if len(res.Tasks) > 0 {
				return fmt.Errorf("claimed %d tasks from empty queues", len(res.Tasks))
			}
		}
		return nil
	}
	if err := claim(warmup); err != nil {
		return result{}, err
	}
	return e.count(ctx, ph, ops, func() error { return claim(ops) })
}
