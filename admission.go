package plait

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// Admission control: caps on the pending tasks of a queue or a tenant.
type (
	// AdmissionScope names one queue or one tenant.
	AdmissionScope = store.AdmissionScope
	// AdmissionSetParams are the arguments of [Scheduler.AdmissionSet].
	AdmissionSetParams = store.AdmissionSetParams
	// AdmissionGetParams are the arguments of [Scheduler.AdmissionGet].
	AdmissionGetParams = store.AdmissionGetParams
	// AdmissionGetResult is the answer of [Scheduler.AdmissionGet].
	AdmissionGetResult = store.AdmissionGetResult
)

// AdmissionSet caps the pending tasks of a queue or of a tenant (exactly
// one of params.Queue and params.Tenant) at params.MaxPending, or removes
// the cap when it is 0. The cap is kept in the store, so every process
// sharing it applies it from its next submit on.
//
// Once a scope has a cap, a [Scheduler.Submit] whose run would take it
// over the cap is refused with an [*AdmissionError] (errors.Is
// [ErrAdmission]) and nothing of the run is written; [Scheduler.SubmitMany]
// refuses only the runs over a cap. A submit with the run key of a run
// already created answers that run, whatever the caps.
//
// Pending tasks are those created and not ended (pending, delayed, ready,
// running, retrying) of the runs submitted while the scope had a cap: a
// run counts against its tenant with all its tasks and against each queue
// with its tasks on that queue (a task with required capabilities counts
// on its queue); each task leaves the count as it ends in any way (done,
// failed, dead, skipped, cancelled with its run or alone) and a replay
// counts it again. Runs submitted while the scope had no cap are not
// counted, so a cap set on a busy queue counts the runs that come after
// it. On a Redis store with several shards, each shard counts and caps on
// its own: a scope holds at most shards × MaxPending pending tasks in all.
// See docs/routing-and-limits.md.
//
// It answers an [*UnsupportedError] on a store without
// [store.AdmissionStore] and an error wrapping [ErrInvalidArgument] for
// params out of range.
func (s *Scheduler) AdmissionSet(ctx context.Context, params AdmissionSetParams) error {
	as, err := capability[store.AdmissionStore](s.store, "AdmissionStore")
	if err != nil {
		return err
	}
	if err := params.Validate(); err != nil {
		return err
	}
	_, err = as.AdmissionSet(ctx, &params)
	return err
}

// AdmissionGet answers the cap of a queue or a tenant (0: none) and its
// pending tasks counted against a cap, summed over the store's shards and
// on the fullest one (see [Scheduler.AdmissionSet]). It answers an
// [*UnsupportedError] on a store without [store.AdmissionStore].
func (s *Scheduler) AdmissionGet(ctx context.Context, params AdmissionGetParams) (*AdmissionGetResult, error) {
	as, err := capability[store.AdmissionStore](s.store, "AdmissionStore")
	if err != nil {
		return nil, err
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	return as.AdmissionGet(ctx, &params)
}
