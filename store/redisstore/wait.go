package redisstore

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/internal/clock"
	"github.com/plaitdag/plait/store"
)

// RunWait blocks until the run is terminal. A run not finished yet is
// waited for on the events channel, whose message from the script that
// ends the run names it, through a subscription connection and a
// subscription shared by the store's waiters (hub.go; on a cluster, one
// per master, the run's own): RunWait subscribes first and reads the run
// after the server confirmed the subscription, so an end between the two
// is seen by the read. It reads the run again only when a message names
// the run (or is of a plait that named no runs), or when the shared
// connection was cut (a message may have been lost). A finished run costs
// no memory for its waiters. See [store.Store.RunWait].
func (s *Store) RunWait(ctx context.Context, params *store.RunWaitParams) (*store.Run, error) {
	shard, err := s.runShard(params.ID)
	if err != nil {
		return nil, err
	}
	run, err := s.RunGet(ctx, &store.RunGetParams{ID: params.ID})
	if err != nil || run.Status.Terminal() {
		return run, err
	}
	w, err := s.runHub(ctx, shard).watch(ctx, s.keys.eventsChannel(), params.ID)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	defer w.stop()
	// The run is read again once the subscription is confirmed, and at
	// every signal, confirmed or not: a message on the channel proves the
	// subscription, so a confirmation that never reached the hub cannot
	// leave a wait hanging after its run has ended.
	ready := w.ready
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ready:
			ready = nil
		case <-w.signal:
		}
		run, err := s.RunGet(ctx, &store.RunGetParams{ID: params.ID})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		if run.Status.Terminal() {
			return run, nil
		}
	}
}

// blpop blocks on keys for at most d (and never past ctx's end) and reports
// whether it took a token. With putBack, a token taken is pushed back for
// other waiters; a token taken after ctx ended is always pushed back, so an
// abandoned wait loses no wake-up.
func (s *Store) blpop(ctx context.Context, keys []string, d time.Duration, putBack bool) (bool, error) {
	if dl, ok := ctx.Deadline(); ok {
		if left := dl.Sub(clock.Real{}.Now()); left < d {
			d = left
		}
	}
	if d < time.Millisecond {
		d = time.Millisecond
	}
	type answer struct {
		got bool
		err error
	}
	ch := make(chan answer, 1)
	bctx := context.WithoutCancel(ctx)
	go func() {
		args := make([]any, 0, len(keys)+2)
		args = append(args, "blpop")
		for _, k := range keys {
			args = append(args, k)
		}
		args = append(args, strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
		v, err := s.client.Do(bctx, args...).StringSlice()
		switch {
		case errors.Is(err, redis.Nil):
			ch <- answer{}
			return
		case err != nil:
			ch <- answer{err: err}
			return
		}
		if len(v) == 2 && (putBack || ctx.Err() != nil) {
			_ = s.client.LPush(bctx, v[0], v[1]).Err()
		}
		ch <- answer{got: len(v) == 2}
	}()
	select {
	case a := <-ch:
		if a.err != nil && ctx.Err() == nil {
			var nerr interface{ Timeout() bool }
			if errors.As(a.err, &nerr) && nerr.Timeout() {
				return false, nil // a client read timeout below d: a spurious return
			}
			return false, a.err
		}
		return a.got, nil
	case <-ctx.Done():
		return false, nil
	}
}
