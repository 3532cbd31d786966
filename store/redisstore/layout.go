package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// One layout for every process sharing a prefix. A run's shard is its id
// modulo the shard count, and a worker claims and waits on the shards it
// believes exist: a process configured with another shard count would look
// for runs on the wrong shards and never see part of the work. Stats are
// the same kind of setting: the scripts count a transition only when the
// process running them has stats on, so a process without them would leave
// its transitions out of every reader's counters. So the first store of a
// prefix records its layout in <prefix>:{layout} (SET NX, no expiry),
//
//	layout <version> shards <n> stats <window, or off>
//
// and every later New compares its own with it: it refuses to start on
// another shard count ([*LayoutError]) or, when it gives [WithStats], on
// another stats setting ([*StatsMismatchError]); without WithStats it takes
// the recorded one.
//
// A record written before stats were part of it ends after the shard
// count. It reads as stats off, and stays as it is, until a process gives
// WithStats: that one adds its setting to the record (compare and set, so
// two such processes cannot both win), and every New after it takes it.
// Processes started before then keep stats off until they are restarted.

// layoutVersion names the key layout of keys.go; it changes only with a
// change of layout that processes of two versions could not share.
const layoutVersion = 1

// statsField opens the stats setting in the layout record.
const statsField = " stats "

// ErrLayoutMismatch is the category of [*LayoutError] and of
// [*StatsMismatchError].
var ErrLayoutMismatch = errors.New("redisstore: the store was laid out differently")

// ErrStatsMismatch is the category of [*StatsMismatchError].
var ErrStatsMismatch = errors.New("redisstore: the store keeps stats differently")

// LayoutError is returned by [New] when the prefix was first used with
// another shard count or key layout than this store's. It matches
// [ErrLayoutMismatch] with errors.Is.
type LayoutError struct {
	// Prefix is the key prefix both share.
	Prefix string
	// Recorded is the layout recorded on first use, Configured this
	// store's, each as "layout <version> shards <n>".
	Recorded   string
	Configured string
}

// Error says what differs and what to do.
func (e *LayoutError) Error() string {
	return fmt.Sprintf("redisstore: prefix %q was first used with %q, and this store is configured with %q: every process sharing a prefix must use the same WithShards (start this one with the recorded value, or use another prefix)",
		e.Prefix, e.Recorded, e.Configured)
}

// Is matches [ErrLayoutMismatch].
func (e *LayoutError) Is(target error) bool { return target == ErrLayoutMismatch }

// StatsMismatchError is returned by [New] when it is given [WithStats] and
// the prefix was first used with another stats setting: stats off, or
// another window. It matches [ErrStatsMismatch] and, stats being part of
// the layout, [ErrLayoutMismatch].
type StatsMismatchError struct {
	// Prefix is the key prefix both share.
	Prefix string
	// Recorded is the stats window recorded on first use and Configured
	// the one this store's WithStats gives; 0 means stats off.
	Recorded   int
	Configured int
}

// Error names both settings and what to do.
func (e *StatsMismatchError) Error() string {
	return fmt.Sprintf("redisstore: prefix %q was first used with %s, and this store is configured with %s: every process sharing a prefix keeps the same stats (start this one without WithStats to take the recorded setting, or use another prefix)",
		e.Prefix, statsSetting(e.Recorded), statsSetting(e.Configured))
}

// Is matches [ErrStatsMismatch] and [ErrLayoutMismatch].
func (e *StatsMismatchError) Is(target error) bool {
	return target == ErrStatsMismatch || target == ErrLayoutMismatch
}

// statsSetting names a stats window as an option would set it.
func statsSetting(window int) string {
	if window == 0 {
		return "stats off"
	}
	return "WithStats(" + strconv.Itoa(window) + ")"
}

// layoutBase is the part of the layout record WithShards sets.
func (s *Store) layoutBase() string {
	return "layout " + strconv.Itoa(layoutVersion) + " shards " + strconv.Itoa(s.cfg.shards)
}

// layoutString is this store's layout as recorded.
func (s *Store) layoutString() string {
	stats := "off"
	if s.cfg.statsWindow > 0 {
		stats = strconv.Itoa(s.cfg.statsWindow)
	}
	return s.layoutBase() + statsField + stats
}

// checkLayout records the layout on first use (recordLayout) and compares.
// The stats window in s.cfg is WithStats's, 0 when it was not given; a
// store without it leaves with the recorded one.
func (s *Store) checkLayout(ctx context.Context) error {
	want := s.layoutString()
	got, fresh, err := s.recordLayout(ctx, want)
	if err != nil || fresh {
		return err
	}
	for try := 0; ; try++ {
		base, stats, hasStats := strings.Cut(got, statsField)
		if base != s.layoutBase() {
			return &LayoutError{Prefix: s.cfg.prefix, Recorded: base, Configured: s.layoutBase()}
		}
		if hasStats {
			window := 0
			if stats != "off" {
				if window, err = strconv.Atoi(stats); err != nil || window < 1 {
					return &LayoutError{Prefix: s.cfg.prefix, Recorded: got, Configured: want}
				}
			}
			if s.cfg.statsWindow != 0 && s.cfg.statsWindow != window {
				return &StatsMismatchError{Prefix: s.cfg.prefix, Recorded: window, Configured: s.cfg.statsWindow}
			}
			s.cfg.statsWindow = window
			return nil
		}
		if s.cfg.statsWindow == 0 {
			return nil // a record from before the stats field: stats off
		}
		if try == 3 {
			return fmt.Errorf("redisstore: recording the stats setting: the layout record kept changing")
		}
		if got, err = s.addStats(ctx, got, want); err != nil {
			return err
		}
	}
}

// addStats replaces a layout record without stats, old, with want, unless
// another process changed it first, and answers the record as it is now.
func (s *Store) addStats(ctx context.Context, old, want string) (string, error) {
	key := s.keys.layout()
	now := old
	err := s.client.Watch(ctx, func(tx *redis.Tx) error {
		cur, err := tx.Get(ctx, key).Result()
		if err != nil || cur != old {
			now = cur
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, key, want, 0)
			return nil
		})
		if err == nil {
			now = want
		}
		return err
	}, key)
	if errors.Is(err, redis.TxFailedErr) {
		return old, nil // changed under the watch: read again
	}
	if err != nil {
		return "", fmt.Errorf("redisstore: recording the stats setting: %w", mapErr(err))
	}
	return now, nil
}
