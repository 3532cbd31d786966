package plait

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/plaitdag/plait/store"
)

// SubscribeFilter selects the events of a [Subscription]. Empty fields match
// everything.
type SubscribeFilter struct {
	// RunID follows one run (its own stream); empty follows the store.
	RunID string
	// Workflow, Service and Tenant keep the events of matching runs.
	Workflow string
	Service  string
	Tenant   string
	// Types keeps the events of these types.
	Types []StoreEventType
	// After is the cursor to resume from: the Cursor of the last event
	// handled. Empty starts at the oldest event the store keeps.
	After EventCursor
}

// subscribeBatch is how many events one read of a Subscription asks for,
// and subscribeWait how long one read blocks.
const (
	subscribeBatch = 512
	subscribeWait  = 5 * time.Second
)

// Subscribe follows the store's events that match filter, in order per run
// (and, on one store shard, in the order they happened), from filter.After.
// It returns an [*UnsupportedError] when the store does not implement
// [EventStore].
func (s *Scheduler) Subscribe(ctx context.Context, filter *SubscribeFilter) (*Subscription, error) {
	es, err := capability[store.EventStore](s.store, "EventStore")
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f := SubscribeFilter{}
	if filter != nil {
		f = *filter
	}
	sub := &Subscription{store: es, filter: f, cursor: f.After}
	if len(f.Types) > 0 {
		sub.types = make(map[StoreEventType]bool, len(f.Types))
		for _, t := range f.Types {
			sub.types[t] = true
		}
	}
	return sub, nil
}

// Subscription delivers the events of one [Scheduler.Subscribe], one call of
// Next at a time. It holds no connection of its own between calls. Its
// methods are safe for concurrent use, but events are delivered once, to
// whichever call of Next asked.
type Subscription struct {
	store  store.EventStore
	filter SubscribeFilter
	types  map[StoreEventType]bool

	mu      sync.Mutex
	cursor  EventCursor
	pending []StoreEvent
}

// Next returns the next matching event, blocking until there is one or ctx
// is done. A store error is returned as it is and the next call resumes
// from the same cursor, so a reconnect loses nothing. When the store's cap
// dropped events after the cursor before they were read, Next returns a
// [*FellBehindError] once, and the calls after it deliver from the oldest
// event kept.
func (sub *Subscription) Next(ctx context.Context) (*StoreEvent, error) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for {
		for len(sub.pending) > 0 {
			ev := sub.pending[0]
			sub.pending = sub.pending[1:]
			sub.cursor = ev.Cursor
			if sub.match(&ev) {
				return &ev, nil
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res, err := sub.store.EventRead(ctx, &store.EventReadParams{
			RunID: sub.filter.RunID, After: sub.cursor, Limit: subscribeBatch, Wait: subscribeWait,
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("plait: subscribe: %w", err)
		}
		sub.pending = res.Events
		if res.FellBehind {
			after := sub.cursor
			if len(res.Events) == 0 {
				sub.cursor = res.Cursor
			}
			return nil, &FellBehindError{After: after}
		}
		if len(res.Events) == 0 {
			sub.cursor = res.Cursor
		}
	}
}

// Cursor is the position after the last event Next returned or skipped as
// not matching: the After to resume from.
func (sub *Subscription) Cursor() EventCursor {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.cursor
}

func (sub *Subscription) match(ev *StoreEvent) bool {
	f := &sub.filter
	if f.RunID != "" && ev.RunID != f.RunID {
		return false
	}
	if f.Workflow != "" && ev.Workflow != f.Workflow {
		return false
	}
	if f.Service != "" && ev.Service != f.Service {
		return false
	}
	if f.Tenant != "" && ev.Tenant != f.Tenant {
		return false
	}
	if sub.types != nil && !sub.types[ev.Type] {
		return false
	}
	return true
}
