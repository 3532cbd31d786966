package worker

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// rejected deals with a batch of outcomes the store rejected as a whole for
// what it carries (store.ErrRejected: a Redis error reply such as "invalid
// bulk length" for a result over the server's proto-max-bulk-len). Sent
// again unchanged it would be rejected again, and every outcome in it held
// until its lease ran out, so its parts are sent instead, each as a write
// of its own (with its own tries): the outcomes that carry something (a
// result or an error text: successes, retries, failures) in halves, down to
// single outcomes, and the others together, last. One outcome still
// rejected on its own fails its attempt for good with the store's error,
// as a result too large for the store does (failInstead): the same outcome
// would be rejected on every attempt.
//
// It reports false, leaving the write to retry the call as it retries any
// failure, when the rejection cannot be put on what the batch carries: no
// outcome in it carries anything but a stand-in's short error, so the
// refusal is the call's, not an outcome's.
func (f *finisher) rejected(ctx context.Context, batch []finishReq, err error, part bool) bool {
	var suspects, others []finishReq
	for _, r := range batch {
		if suspect(r) {
			suspects = append(suspects, r)
		} else {
			others = append(others, r)
		}
	}
	switch {
	case len(suspects) == 0:
		return false
	case len(batch) == 1:
		f.failInstead(batch[0], err, "plait: the store rejected the outcome on its own; the attempt fails")
		return true
	}
	if !part {
		f.p.cfg.Logger.Warn("plait: the store rejected a batch of outcomes; sending it in parts", "err", err, "count", len(batch))
	}
	var parts [][]finishReq
	if len(suspects) == 1 {
		parts = append(parts, suspects)
	} else {
		h := len(suspects) / 2
		parts = append(parts, suspects[:h], suspects[h:])
	}
	if len(others) > 0 {
		parts = append(parts, others)
	}
	for _, p := range parts {
		f.send(ctx, p, nil, true)
	}
	return true
}

// suspect reports whether the store may have rejected r for what it
// carries: a success, retry or failure as the handler returned it. A
// release and a hand-back carry nothing the handler chose, and a stand-in
// (failInstead) only the store's own short error.
func suspect(r finishReq) bool {
	if r.standIn {
		return false
	}
	switch r.o.Outcome {
	case store.OutcomeSucceeded, store.OutcomeRetry, store.OutcomeFailed:
		return true
	}
	return false
}
