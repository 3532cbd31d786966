package plait

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/plaitdag/plait/store"
)

// SubscribeFilter selects the events of a [Subscription] and where they
// start. Empty fields match everything. A subscription starts at one place:
// the oldest event kept (the default), a cursor (After), the end of the
// stream (FromNow) or a time (Since); two of them at once are refused with
// an [*EventStartError].
type SubscribeFilter struct {
	// RunID follows one run (its own stream); empty follows the store.
	RunID string
	// Workflow, Service and Tenant keep the events of matching runs.
	Workflow string
	Service  string
	Tenant   string
	// Types keeps the events of these types.
	Types []StoreEventType
	// MinGeneration keeps the events of the generations at or above it
	// ([StoreEvent].Generation; a run's generation counts its replays,
	// [Run].Generation). A watcher of a run replayed to generation n
	// passes n, so that the run_failed of an earlier generation is not
	// taken for the end of the run. Zero keeps every generation; below
	// zero is refused.
	MinGeneration int64
	// After is the cursor to resume from: the Cursor of the last event
	// handled. Empty starts at the oldest event the store keeps.
	After EventCursor
	// FromNow starts at the end of the stream as Subscribe finds it: none
	// of the events kept, only those appended after Subscribe returns
	// (Subscribe reads the end once, [store.EventCursorLatest]).
	FromNow bool
	// Since, when not zero, starts at the first event kept whose time is at
	// or after it (events have the store's clock, in ms), or at the end of
	// the stream when there is none yet. Until the first read, Cursor
	// answers the empty cursor: resume such a subscription with the same
	// Since.
	Since time.Time
}

// validate refuses a filter with two starts or a negative generation.
func (f *SubscribeFilter) validate() error {
	var starts []string
	if f.After != "" {
		starts = append(starts, "After")
	}
	if f.FromNow {
		starts = append(starts, "FromNow")
	}
	if !f.Since.IsZero() {
		starts = append(starts, "Since")
	}
	if len(starts) > 1 {
		return &EventStartError{Starts: starts}
	}
	if f.MinGeneration < 0 {
		return fmt.Errorf("plait: subscribe: MinGeneration %d is below 0: %w", f.MinGeneration, ErrInvalidArgument)
	}
	return nil
}

// subscribeBatch is how many events one read of a Subscription asks for,
// and subscribeWait how long one read blocks.
const (
	subscribeBatch = 512
	subscribeWait  = 5 * time.Second
)

// Subscribe follows the store's events that match filter, in order per run
// (and, on one store shard, in the order they happened), from the start
// the filter names. It returns an [*UnsupportedError] when the store does
// not implement [EventStore], and an [*EventStartError] for a filter with
// two starts. With FromNow it reads the end of the stream before it
// returns (one bounded read: see [store.EventCursorLatest]).
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
	if err := f.validate(); err != nil {
		return nil, err
	}
	sub := &Subscription{store: es, filter: f, cursor: f.After, since: f.Since}
	if f.FromNow {
		res, err := es.EventRead(ctx, &store.EventReadParams{RunID: f.RunID, After: store.EventCursorLatest, Limit: 1})
		if err != nil {
			return nil, fmt.Errorf("plait: subscribe: %w", err)
		}
		sub.cursor = res.Cursor
	}
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
	since   time.Time // the start of the first read, then zero
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
			RunID: sub.filter.RunID, After: sub.cursor, Since: sub.since, Limit: subscribeBatch, Wait: subscribeWait,
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("plait: subscribe: %w", err)
		}
		// the start is read: from here on the cursor says where it is
		sub.since = time.Time{}
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
	if ev.Generation < f.MinGeneration {
		return false
	}
	return true
}
