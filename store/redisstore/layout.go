package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// One layout for every process sharing a prefix. A run's shard is its id
// modulo the shard count, and a worker claims and waits on the shards it
// believes exist: a process configured with another shard count would look
// for runs on the wrong shards and never see part of the work. So the first
// store of a prefix records its layout in <prefix>:{layout} (SET NX, no
// expiry), and every later New compares its own with it and refuses to
// start on a difference.

// layoutVersion names the key layout of keys.go; it changes only with a
// change of layout that processes of two versions could not share.
const layoutVersion = 1

// ErrLayoutMismatch is the category of [*LayoutError].
var ErrLayoutMismatch = errors.New("redisstore: the store was laid out differently")

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

// layoutString is this store's layout as recorded.
func (s *Store) layoutString() string {
	return "layout " + strconv.Itoa(layoutVersion) + " shards " + strconv.Itoa(s.cfg.shards)
}

// checkLayout records the layout on first use (one SET NX ... GET round
// trip: it answers the value already there) and compares.
func (s *Store) checkLayout(ctx context.Context) error {
	want := s.layoutString()
	got, err := s.client.SetArgs(ctx, s.keys.layout(), want, redis.SetArgs{Mode: "NX", Get: true}).Result()
	if errors.Is(err, redis.Nil) {
		return nil // recorded now
	}
	if err != nil {
		return fmt.Errorf("redisstore: recording the layout: %w", mapErr(err))
	}
	if got != want {
		return &LayoutError{Prefix: s.cfg.prefix, Recorded: got, Configured: want}
	}
	return nil
}
