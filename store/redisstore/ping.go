package redisstore

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// StorePing checks that the server answers: one round trip, TIME, which
// every Redis answers, even out of memory, and which changes nothing. It
// returns the server's clock, or under [WithClock] the injected clock's
// reading, the same "now" the scripts use, cut down to the millisecond as
// every time the store answers; the round trip is made either way, so a
// server that does not answer is reported. A transport error, or the end
// of ctx, is returned as it is. See [store.Pinger].
func (s *Store) StorePing(ctx context.Context, _ *store.StorePingParams) (*store.StorePingResult, error) {
	now, err := s.client.Time(ctx).Result()
	if err != nil {
		return nil, mapErr(err)
	}
	if s.cfg.clock != nil {
		now = s.cfg.clock.Now()
	}
	return &store.StorePingResult{Now: msTime(now.UnixMilli())}, nil
}
