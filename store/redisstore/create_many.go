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
// trip per createManyChunk runs, each create still its own script.
const createManyChunk = 256

// RunCreateMany creates runs in order, sending the creates of up to
// createManyChunk runs in one pipeline. See [store.Store.RunCreateMany].
// A run of more than createChunk tasks goes on its own, as RunCreate sends
// it, between the pipelines before and after it; a keyed run whose key is
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

// sendCreates sends run_create.lua for each request in one pipeline and
// returns each reply or each refusal. A pipeline cannot fall back per
// command, so when the server lacks the script or the function library
// (a restart emptied it) it loads them and sends the whole pipeline again:
// a create repeated with its id finds its run and answers created. A create
// Redis rejected for what it carries answers store.ErrRejected.
func (s *Store) sendCreates(ctx context.Context, reqs []*createReq) ([][]any, []error, error) {
	calls := make([]scriptCall, len(reqs))
	for i, r := range reqs {
		calls[i] = scriptCall{keys: r.keys, args: r.args}
	}
	cmds, execErr := s.pipeline(ctx, scriptRunCreate, calls, false)
	replies := make([][]any, len(reqs))
	errs := make([]error, len(reqs))
	answered := 0
	for i, c := range cmds {
		v, err := c.Result()
		if err != nil {
			errs[i] = scriptErr(err)
			if errors.Is(errs[i], store.ErrStoreFull) {
				answered++
			}
			continue
		}
		answered++
		rv, ok := v.([]any)
		if !ok {
			errs[i] = fmt.Errorf("redisstore: unexpected create reply %T", v)
			continue
		}
		replies[i] = rv
	}
	// No command answered: the pipeline itself failed (connection,
	// context), which is the call's error, not the runs'.
	if answered == 0 && execErr != nil {
		return nil, nil, mapErr(execErr)
	}
	return replies, errs, nil
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
			switch {
			case s.functions && readOnly:
				cmds[i] = pipe.FCallRO(ctx, sc.function(), c.keys, c.args...)
			case s.functions:
				cmds[i] = pipe.FCall(ctx, sc.function(), c.keys, c.args...)
			default:
				// EVALSHA even for a read-only script: servers without
				// functions (before Redis 7) have no EVALSHA_RO either.
				cmds[i] = sc.eval.EvalSha(ctx, pipe, c.keys, c.args...)
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
