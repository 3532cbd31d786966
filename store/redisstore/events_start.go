package redisstore

// Where a read of the event streams starts when it names no cursor of its
// own: the end of each stream (store.EventCursorLatest) or the first event
// at or after a time (EventReadParams.Since). Both resolve, before the
// read, to a cursor like any other, one position per shard stream read.

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/store"
)

// sinceFirstChunk is how many entries the first XRANGE of a start time
// reads: under the server's clock it starts at the time's own stream id,
// where the first entry is almost always the one.
const sinceFirstChunk = 16

// resolveStart returns params with its start resolved into the cursor After.
func (s *Store) resolveStart(ctx context.Context, streams []string, params *store.EventReadParams) (*store.EventReadParams, error) {
	c, err := s.eventStart(ctx, streams, params)
	if err != nil {
		return nil, err
	}
	p := *params
	p.After, p.Since = c, time.Time{}
	return &p, nil
}

// eventStart resolves the start of params (EventCursorLatest or Since)
// into a cursor of streams, the shard streams read (every shard's for the
// store's stream, the run's shard's for a run's). Per stream: its newest
// entry, with one XREVRANGE of one entry, all pipelined; for Since then
// the first entry whose time is at or after it, from its stream id (ms)
// under the server's clock, from the stream's start under WithClock, whose
// times are not the ids, in XRANGEs of sinceFirstChunk then runScanChunk
// entries, at most up to the newest entry, so at most the cap. A position
// "<id>.0" is the one before the first event of entry id; a stream with
// nothing at or after Since is read from its newest entry, and an empty
// one from its start.
func (s *Store) eventStart(ctx context.Context, streams []string, params *store.EventReadParams) (store.EventCursor, error) {
	since := !params.Since.IsZero()
	var sinceMs int64
	start := "-"
	if since {
		sinceMs = params.Since.UnixMilli()
		if params.Since.After(time.UnixMilli(sinceMs)) {
			sinceMs++ // events are in ms: the first at or after Since
		}
		if s.cfg.clock == nil {
			start = strconv.FormatInt(max(sinceMs, 0), 10) + "-0"
		}
	}
	last := make([]*redis.Cmd, len(streams))
	first := make([]*redis.Cmd, len(streams))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range streams {
			last[i] = p.Do(ctx, "XREVRANGE", k, "+", "-", "COUNT", 1)
			if since {
				first[i] = xrange(ctx, p, k, start, sinceFirstChunk)
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", mapErr(err)
	}
	pos := make([]string, len(streams))
	for i, k := range streams {
		ends, err := readEntries(last[i])
		if err != nil {
			return "", err
		}
		if len(ends) == 0 {
			continue // empty: its start is its end
		}
		end := ends[0]
		pos[i] = end.id + "." + strconv.Itoa(max(len(end.events()), 1))
		if !since {
			continue
		}
		found, err := s.firstSince(ctx, k, first[i], end.id, sinceMs)
		if err != nil {
			return "", err
		}
		if found != "" {
			pos[i] = found + ".0"
		}
	}
	return store.EventCursor(strings.Join(pos, ",")), nil
}

// firstSince returns the id of the first entry of stream k, from the
// answer of the first XRANGE on, whose time is at or after sinceMs, looking
// no further than entry end; "" when there is none.
func (s *Store) firstSince(ctx context.Context, k string, cmd *redis.Cmd, end string, sinceMs int64) (string, error) {
	count := sinceFirstChunk
	for {
		msgs, err := readEntries(cmd)
		if err != nil {
			return "", err
		}
		for _, m := range msgs {
			if streamIDLess(end, m.id) {
				return "", nil
			}
			if len(m.pairs) < 2 || m.pairs[0] != "t" {
				continue
			}
			if t, err := strconv.ParseInt(m.pairs[1], 10, 64); err == nil && t >= sinceMs {
				return m.id, nil
			}
		}
		if len(msgs) < count {
			return "", nil
		}
		count = runScanChunk
		cmd = xrange(ctx, s.client, k, "("+msgs[len(msgs)-1].id, count)
	}
}
