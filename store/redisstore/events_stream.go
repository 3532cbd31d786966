package redisstore

// Positions and entries of the shard event streams: how a cursor names a
// place in each stream and how an XRANGE answer splits into events.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
	"github.com/redis/go-redis/v9"
)

// parseCursor splits a cursor into one stream id per stream; the empty
// cursor is the start of each.
func parseCursor(c store.EventCursor, n int) ([]string, error) {
	pos := make([]string, n)
	if c == "" {
		return pos, nil
	}
	parts := strings.Split(string(c), ",")
	if len(parts) != n {
		return nil, fmt.Errorf("redisstore: event cursor %s is not one of this stream: %w", ids.Quote(string(c)), store.ErrInvalidArgument)
	}
	for i, p := range parts {
		if p == "" {
			continue
		}
		if _, _, ok := splitPos(p); !ok {
			return nil, fmt.Errorf("redisstore: event cursor %s: %w", ids.Quote(string(c)), store.ErrInvalidArgument)
		}
		pos[i] = p
	}
	return pos, nil
}

// splitPos splits a position "<ms>-<seq>.<field>" into the stream id and
// the field number of the event within the entry, from 1; field 0 is the
// place before the entry's first event (a start time's, events_start.go).
func splitPos(p string) (id string, field int, ok bool) {
	id, f, ok := strings.Cut(p, ".")
	if !ok {
		return "", 0, false
	}
	ms, seq, ok := strings.Cut(id, "-")
	if !ok {
		return "", 0, false
	}
	if _, err := strconv.ParseUint(ms, 10, 64); err != nil {
		return "", 0, false
	}
	if _, err := strconv.ParseUint(seq, 10, 64); err != nil {
		return "", 0, false
	}
	n, err := strconv.Atoi(f)
	if err != nil || n < 0 {
		return "", 0, false
	}
	return id, n, true
}

// posLess orders two positions.
func posLess(a, b string) bool {
	aid, af, _ := splitPos(a)
	bid, bf, _ := splitPos(b)
	if aid != bid {
		return streamIDLess(aid, bid)
	}
	return af < bf
}

// streamEntry is one entry of a shard's event stream, its field-value
// pairs in order (go-redis's XMessage keeps them in a map, which would fold
// the repeated fields).
type streamEntry struct {
	id    string
	pairs []string
}

// rawEvent is one event of an entry before it is decoded: its position
// "<entry id>.<n>" (n from 1), its run, the entry's time in ms and its
// value (see decodeEvent).
type rawEvent struct {
	pos, run, now, v string
}

// xrange reads up to count entries of a stream from start, inclusive.
func xrange(ctx context.Context, c interface {
	Do(ctx context.Context, args ...any) *redis.Cmd
}, key, start string, count int) *redis.Cmd {
	return c.Do(ctx, "XRANGE", key, start, "+", "COUNT", count)
}

// readEntries parses the answer of an xrange.
func readEntries(cmd *redis.Cmd) ([]streamEntry, error) {
	items, err := cmd.Slice()
	if err != nil {
		if errors.Is(err, redis.Nil) {
			return nil, nil
		}
		return nil, mapErr(err)
	}
	out := make([]streamEntry, 0, len(items))
	for _, it := range items {
		e, ok := it.([]any)
		if !ok || len(e) != 2 {
			return nil, corrupt("event stream entry %v", it)
		}
		id, _ := e[0].(string)
		fs, _ := e[1].([]any)
		pairs := make([]string, len(fs))
		for i, f := range fs {
			pairs[i], _ = f.(string)
		}
		out = append(out, streamEntry{id: id, pairs: pairs})
	}
	return out, nil
}

// events returns the events of an entry written by flush_events
// (lua/lib_buffers.lua): a first pair "t" and the call's now in ms, then
// one pair per run and call, its run id and its events (note in
// lua/lib_status.lua): one value, or, in format version 8, the run's
// adjacent events joined by the byte 0x1f, an error after a newline belonging to
// the last of them; the free-text events ('?', '%', '#') are never
// joined. Events are numbered in the entry from 1, so a position names
// one event whether or not it was joined (an entry of one event per pair,
// as format 7 writes, numbers them by pair).
func (e streamEntry) events() []rawEvent {
	if len(e.pairs) < 2 || e.pairs[0] != "t" {
		return nil
	}
	now := e.pairs[1]
	out := make([]rawEvent, 0, len(e.pairs)/2-1)
	add := func(run, v string) {
		out = append(out, rawEvent{pos: e.id + "." + strconv.Itoa(len(out)+1), run: run, now: now, v: v})
	}
	for k := 2; k+1 < len(e.pairs); k += 2 {
		run, v := e.pairs[k], e.pairs[k+1]
		if v == "" || v[0] == '?' || v[0] == '%' || v[0] == '#' {
			add(run, v)
			continue
		}
		head, errText, hasErr := strings.Cut(v, "\n")
		for {
			one, rest, joined := strings.Cut(head, "\x1f")
			if !joined {
				if hasErr {
					one += "\n" + errText
				}
				add(run, one)
				break
			}
			add(run, one)
			head = rest
		}
	}
	return out
}

// streamIDLess orders two stream ids.
func streamIDLess(a, b string) bool {
	am, as, _ := strings.Cut(a, "-")
	bm, bs, _ := strings.Cut(b, "-")
	an, _ := strconv.ParseUint(am, 10, 64)
	bn, _ := strconv.ParseUint(bm, 10, 64)
	if an != bn {
		return an < bn
	}
	aq, _ := strconv.ParseUint(as, 10, 64)
	bq, _ := strconv.ParseUint(bs, 10, 64)
	return aq < bq
}
