package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/plaitdag/plait/store"
	"github.com/redis/go-redis/v9"
)

// createManyChunk bounds how many creates go in one pipeline: one round
// trip per createManyChunk runs.
const createManyChunk = 256

// createManyRuns and createManyBytes bound one run_create_many.lua call:
// at most createManyRuns runs and, past its first run, createManyBytes of
// arguments, so that one call holds Redis for a bounded time and Lua a
// bounded argument list. A run alone over createManyBytes goes in a call
// of its own (its size is bounded by createChunk tasks and the server's
// proto-max-bulk-len per argument).
const (
	createManyRuns  = 64
	createManyBytes = 1 << 20
)

// RunCreateMany creates runs, sending the creates of up to
// createManyChunk runs in one pipeline, the runs of one shard together in
// run_create_many.lua calls of up to createManyRuns runs (a call per shard
// touched, more past the bounds). See [store.Store.RunCreateMany]. Runs of
// one shard are written in the order given; each answers on its own (a run
// refused does not fail the others of its call), but a call Redis refuses
// for memory answers store.ErrStoreFull for each of its runs. A run of
// more than createChunk tasks goes on its own, as RunCreate sends it,
// between the pipelines before and after it; a keyed run whose key is
// taken costs one more round trip to read the existing run.
func (s *Store) RunCreateMany(ctx context.Context, params []*store.RunCreateParams) ([]store.RunCreateOutcome, error) {
	out := make([]store.RunCreateOutcome, len(params))
	var pending []int // indexes of prepared creates not sent yet
	reqs := make([]*createReq, len(params))
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		batch := make([]*createReq, len(pending))
		for j, i := range pending {
			batch[j] = reqs[i]
		}
		replies, errs, err := s.sendCreates(ctx, batch)
		if err != nil {
			return err
		}
		for j, i := range pending {
			if errs[j] != nil {
				out[i].Err = errs[j]
				continue
			}
			out[i].Result, out[i].Err = s.createAnswer(ctx, batch[j], replies[j])
		}
		pending = pending[:0]
		return nil
	}
	for i, p := range params {
		req, found, err := s.prepareCreate(ctx, p)
		switch {
		case err != nil && errors.Is(err, store.ErrInvalidArgument):
			out[i].Err = err
		case err != nil:
			return nil, err
		case found != nil:
			out[i].Result = found
		case req.parts != nil:
			if err := flush(); err != nil {
				return nil, err
			}
			out[i].Result, out[i].Err = s.RunCreate(ctx, p)
		case s.overBulk(req.args) > 0:
			out[i].Err = fmt.Errorf("redisstore: run create with an argument of %d bytes, over the server's proto-max-bulk-len of %d: %w",
				s.overBulk(req.args), s.bulkMax, store.ErrRejected)
		default:
			reqs[i] = req
			pending = append(pending, i)
			if len(pending) == createManyChunk {
				if err := flush(); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// argBytes is the length of the string and byte arguments of args.
func argBytes(args []any) int {
	n := 0
	for _, a := range args {
		switch v := a.(type) {
		case string:
			n += len(v)
		case []byte:
			n += len(v)
		default:
			n += 8
		}
	}
	return n
}

// createCalls groups reqs into run_create_many.lua calls: the runs of one
// shard (one base) together, in the order given, a call closed at
// createManyRuns runs or createManyBytes of arguments. at[i] lists the
// requests of call i, in the order of its replies.
func createCalls(reqs []*createReq) (calls []scriptCall, at [][]int) {
	open := map[string]int{} // shard base -> its call still open
	size := map[string]int{}
	for i, r := range reqs {
		base := r.args[1].(string)
		n := argBytes(r.args[2:])
		c, ok := open[base]
		if ok && (len(at[c]) == createManyRuns || size[base]+n > createManyBytes) {
			ok = false
		}
		if !ok {
			c = len(calls)
			open[base], size[base] = c, 0
			calls = append(calls, scriptCall{args: []any{r.args[0], base}})
			at = append(at, nil)
		}
		keyed := 0
		if len(r.keys) > 1 {
			keyed = 1
		}
		calls[c].keys = append(calls[c].keys, r.keys...)
		calls[c].args = append(append(calls[c].args, keyed), r.args[2:]...)
		at[c] = append(at[c], i)
		size[base] += n
	}
	return calls, at
}

// sendCreates sends the creates of reqs as run_create_many.lua calls
// (createCalls) in one pipeline and returns each run's reply, a pair of
// run_create.lua's form, or its refusal. A pipeline cannot fall back per
// command, so when the server lacks the script or the function library
// (a restart emptied it) it loads them and sends the whole pipeline again:
// a create repeated with its id finds its run and answers created. A call
// Redis rejected (for memory, or for what it carries) answers its error
// for each of its runs.
func (s *Store) sendCreates(ctx context.Context, reqs []*createReq) ([][]any, []error, error) {
	calls, at := createCalls(reqs)
	cmds, execErr := s.pipeline(ctx, scriptRunCreateMany, calls, false)
	replies := make([][]any, len(reqs))
	errs := make([]error, len(reqs))
	answered := 0
	for c, cmd := range cmds {
		v, err := cmd.Result()
		if err != nil {
			err = scriptErr(err)
			if errors.Is(err, store.ErrStoreFull) {
				answered++
			}
			for _, i := range at[c] {
				errs[i] = err
			}
			continue
		}
		answered++
		rv, ok := v.([]any)
		if !ok || len(rv) != 2*len(at[c]) {
			for _, i := range at[c] {
				errs[i] = fmt.Errorf("redisstore: unexpected create reply %T of %d runs", v, len(at[c]))
			}
			continue
		}
		for j, i := range at[c] {
			replies[i] = rv[2*j : 2*j+2]
		}
	}
	// No command answered: the pipeline itself failed (connection,
	// context), which is the call's error, not the runs'.
	if answered == 0 && execErr != nil {
		return nil, nil, mapErr(execErr)
	}
	return replies, errs, nil
}

// overBulk answers the length of the first of args longer than the
// server's proto-max-bulk-len, or 0. Redis answers such an argument with
// "Protocol error: invalid bulk length" and closes the connection, so every
// create after it in the pipeline would fail too: RunCreateMany answers
// that run store.ErrRejected instead of sending it.
func (s *Store) overBulk(args []any) int {
	if s.bulkMax == 0 {
		return 0
	}
	for _, a := range args {
		n := 0
		switch v := a.(type) {
		case string:
			n = len(v)
		case []byte:
			n = len(v)
		}
		if n > s.bulkMax {
			return n
		}
	}
	return 0
}

// pipeline sends one call of sc per element of calls in one pipeline and
// returns the commands and the pipeline's error. A pipeline cannot fall
// back per command, so when the server lacks the script or the function
// library (a restart emptied it) it loads them and sends the whole
// pipeline again; every script sent this way must be safe to repeat.
// readOnly sends FCALL_RO where the server has functions.
func (s *Store) pipeline(ctx context.Context, sc *script, calls []scriptCall, readOnly bool) ([]*redis.Cmd, error) {
	for try := 0; ; try++ {
		pipe := s.client.Pipeline()
		cmds := make([]*redis.Cmd, len(calls))
		for i, c := range calls {
			keys := s.guarded(c.keys)
			switch {
			case s.functions && readOnly:
				cmds[i] = pipe.FCallRO(ctx, sc.function(), keys, c.args...)
			case s.functions:
				cmds[i] = pipe.FCall(ctx, sc.function(), keys, c.args...)
			default:
				// EVALSHA even for a read-only script: servers without
				// functions (before Redis 7) have no EVALSHA_RO either.
				cmds[i] = sc.eval.EvalSha(ctx, pipe, keys, c.args...)
			}
		}
		_, execErr := pipe.Exec(ctx)
		if try > 0 || !missingScript(cmds) {
			return cmds, execErr
		}
		var err error
		if s.functions {
			err = s.loadLibrary(ctx)
		} else {
			err = sc.eval.Load(ctx, s.client).Err()
		}
		if err != nil {
			return nil, err
		}
	}
}

// missingScript reports whether a command failed for want of its script or
// function on the server.
func missingScript(cmds []*redis.Cmd) bool {
	for _, c := range cmds {
		if err := c.Err(); err != nil && (strings.HasPrefix(err.Error(), "NOSCRIPT") || strings.Contains(err.Error(), "Function not found")) {
			return true
		}
	}
	return false
}
