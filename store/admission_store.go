package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/plaitdag/plait/internal/ids"
)

// AdmissionStore is the capability of capping the pending tasks of a queue
// or of a tenant, so that one tenant (or one runaway producer on a queue)
// cannot fill the store: a create that would take a capped queue or tenant
// over its cap is refused whole with an [*AdmissionError], in the same
// step that would have written it, and nothing of it is written. The caps
// are kept in the store, so every process sharing it applies the same ones.
// Both shipped stores implement it.
//
// Pending tasks are the tasks created and not ended yet (pending, delayed,
// ready, running or retrying) of the runs counted against a cap: a run is
// counted against each of its scopes (its tenant, the queue of each of its
// tasks) that had a cap when it was created, and stays counted until each
// of its tasks ends, whatever becomes of the cap. Each task's move to a
// final status (succeeded, failed, dead, skipped, cancelled, by a finish, a
// cancel of its run, an operator's control, the sweep) takes it off, in the
// transition that makes the move; a replay brings it back, without a check:
// the run was admitted. Runs created while their scopes had no cap are not
// counted, and cost nothing: so a cap set on a queue that already holds
// tasks counts from the runs created after it.
//
// A store split in shards (redisstore's WithShards) keeps one count per
// shard and applies each cap per shard, since a create writes one shard:
// with n shards a capped scope holds at most n times its cap. The cap of
// one shard bounds what the scope takes of that shard's memory.
type AdmissionStore interface {
	// AdmissionSet sets the cap of a queue or a tenant, or removes it
	// (MaxPending 0). It writes the cap to each shard (one write each)
	// and changes no count. Sent again, it sets the same cap.
	AdmissionSet(ctx context.Context, params *AdmissionSetParams) (*AdmissionSetResult, error)
	// AdmissionGet answers the cap of a queue or a tenant and its pending
	// tasks. It reads two fields per shard and changes nothing.
	AdmissionGet(ctx context.Context, params *AdmissionGetParams) (*AdmissionGetResult, error)
}

// ErrAdmission is the category of [*AdmissionError]: a create refused by
// a cap of [AdmissionStore].
var ErrAdmission = errors.New("plait: admission refused")

// AdmissionError is the answer to a create that would have taken a queue
// or a tenant over its cap ([AdmissionStore]). Nothing of the run was
// written. It matches [ErrAdmission] with errors.Is.
type AdmissionError struct {
	// Queue or Tenant names the capped scope that refused the run (the
	// other is empty); when several would, the tenant is named first, then
	// the queues in the order of the run's tasks.
	Queue  string
	Tenant string
	// MaxPending is the scope's cap, Pending its pending tasks counted
	// when the run came (on the run's shard), Tasks the run's tasks in the
	// scope: Pending+Tasks is over MaxPending.
	MaxPending int64
	Pending    int64
	Tasks      int64
}

// Error names the scope and its counts.
func (e *AdmissionError) Error() string {
	scope := "queue " + ids.Quote(e.Queue)
	if e.Tenant != "" {
		scope = "tenant " + ids.Quote(e.Tenant)
	}
	return "plait: admission refused: " + scope + " has " + strconv.FormatInt(e.Pending, 10) +
		" pending tasks, and " + strconv.FormatInt(e.Tasks, 10) + " more would pass its cap of " +
		strconv.FormatInt(e.MaxPending, 10)
}

// Is matches [ErrAdmission].
func (e *AdmissionError) Is(target error) bool { return target == ErrAdmission }

// AdmissionMax is the largest cap [AdmissionSetParams] accepts.
const AdmissionMax = 1 << 40

// AdmissionScope names what a cap applies to: exactly one of a queue (a
// plain queue: a routed task counts on its queue) and a tenant.
type AdmissionScope struct {
	Queue  string
	Tenant string
}

// Validate reports why the scope names no one queue or tenant. The error
// wraps [ErrInvalidArgument].
func (s AdmissionScope) Validate() error {
	switch {
	case (s.Queue == "") == (s.Tenant == ""):
		return fmt.Errorf("plait: admission needs a queue or a tenant, not both: %w", ErrInvalidArgument)
	case s.Queue != "" && ids.Check(s.Queue) != nil:
		return fmt.Errorf("plait: admission queue %s %v: %w", ids.Quote(s.Queue), ids.Check(s.Queue), ErrInvalidArgument)
	case s.Tenant != "" && ids.Check(s.Tenant) != nil:
		return fmt.Errorf("plait: admission tenant %s %v: %w", ids.Quote(s.Tenant), ids.Check(s.Tenant), ErrInvalidArgument)
	}
	return nil
}

// AdmissionSetParams are the arguments of [AdmissionStore.AdmissionSet].
type AdmissionSetParams struct {
	AdmissionScope
	// MaxPending is the most pending tasks the scope may hold (per shard),
	// 1 to [AdmissionMax]; 0 removes the cap.
	MaxPending int64
}

// Validate reports why the cap cannot be set: a scope that is not one
// valid name, a cap out of range. The error wraps [ErrInvalidArgument].
func (p *AdmissionSetParams) Validate() error {
	if err := p.AdmissionScope.Validate(); err != nil {
		return err
	}
	if p.MaxPending < 0 || p.MaxPending > AdmissionMax {
		return fmt.Errorf("plait: admission cap %d, want 0 (none) to %d: %w", p.MaxPending, int64(AdmissionMax), ErrInvalidArgument)
	}
	return nil
}

// AdmissionSetResult is the answer of [AdmissionStore.AdmissionSet].
type AdmissionSetResult struct{}

// AdmissionGetParams are the arguments of [AdmissionStore.AdmissionGet].
type AdmissionGetParams struct {
	AdmissionScope
}

// Validate reports why the scope names no one queue or tenant. The error
// wraps [ErrInvalidArgument].
func (p *AdmissionGetParams) Validate() error { return p.AdmissionScope.Validate() }

// AdmissionGetResult is the answer of [AdmissionStore.AdmissionGet].
type AdmissionGetResult struct {
	// MaxPending is the scope's cap, 0 when it has none. Should shards
	// disagree (a set cut off midway), it is the largest; set it again.
	MaxPending int64
	// Pending is the scope's pending tasks counted against a cap, summed
	// over the shards, and PendingShardMax the largest count of one
	// shard, the one each create is checked against.
	Pending         int64
	PendingShardMax int64
}
