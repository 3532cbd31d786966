package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/internal/ids"
)

// The prefixes a Redis holds. The layout record of a prefix
// (<prefix>:{layout}, layout.go) is written by its first New, so a prefix
// without one has never been used: under [WithExistingPrefix], New refuses
// it rather than open an empty store under a mistyped name. To name the
// prefixes that do exist without KEYS or SCAN, every New adds its prefix to
// one small set, prefixRegistry; it shares the slot of every layout record
// (hash tag "layout"), and is kept on a best-effort basis: a client whose
// ACL does not reach it still starts, and its prefix is just not listed.

// prefixRegistry is the set of the prefixes New was called with.
const prefixRegistry = "plait:{layout}:prefixes"

// knownListed is the most prefixes a [*PrefixUnknownError] names.
const knownListed = 20

// prefixRule is the rule of a prefix, for the errors of WithPrefix.
var prefixRule = "want 1-" + strconv.Itoa(ids.MaxLen) + " bytes of [A-Za-z0-9._-]"

// prefixReason says why a prefix holds no other characters.
const prefixReason = "because ':' separates the parts of every key and '{' '}' would change its hash slot"

// ErrPrefixUnknown is the category of [*PrefixUnknownError].
var ErrPrefixUnknown = errors.New("redisstore: the prefix has never been used")

// PrefixUnknownError is returned by [New] under [WithExistingPrefix] when
// no store has used the prefix yet. It matches [ErrPrefixUnknown] with
// errors.Is.
type PrefixUnknownError struct {
	// Prefix is the prefix given.
	Prefix string
	// Known holds, sorted, up to 20 of the prefixes stores have used on
	// this Redis (those opened by a version that keeps the list), and
	// Total how many there are; both are zero when the list cannot be read.
	Known []string
	Total int
}

// Error names the prefix and the ones that exist.
func (e *PrefixUnknownError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "redisstore: prefix %q has no layout record, so no store has used it, and WithExistingPrefix refuses to start a new one", e.Prefix)
	switch {
	case len(e.Known) == 0:
		b.WriteString(" (no known prefixes to list)")
	default:
		b.WriteString(" (known prefixes: ")
		for i, p := range e.Known {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(p))
		}
		if more := e.Total - len(e.Known); more > 0 {
			fmt.Fprintf(&b, " and %d more", more)
		}
		b.WriteString(")")
	}
	return b.String()
}

// Is matches [ErrPrefixUnknown].
func (e *PrefixUnknownError) Is(target error) bool { return target == ErrPrefixUnknown }

// WithExistingPrefix makes [New] refuse, with a [*PrefixUnknownError]
// (matching [ErrPrefixUnknown]), a prefix no store has used yet, instead of
// recording its layout and opening an empty store: for the processes that
// join a deployment, whose mistyped prefix would otherwise wait on queues
// nobody fills. The process that sets the deployment up starts without it.
func WithExistingPrefix() Option { return func(c *config) { c.existingPrefix = true } }

// prefixError is the reason WithPrefix gives for a prefix ids.Check
// refused: what is wrong, the rule, and, for a character, why.
func prefixError(p string, err error) string {
	if !errors.Is(err, ids.ErrChar) {
		return err.Error() + "; " + prefixRule
	}
	i := strings.IndexFunc(p, func(r rune) bool { return r >= utf8.RuneSelf || ids.Check(string(r)) != nil })
	r, _ := utf8.DecodeRuneInString(p[i:])
	char := strconv.QuoteRune(r)
	if r == utf8.RuneError {
		char = fmt.Sprintf("byte %#x", p[i])
	}
	return fmt.Sprintf("%v (%s at byte %d); %s, %s", err, char, i, prefixRule, prefixReason)
}

// recordLayout writes want as the prefix's layout record unless it has
// one (SET NX GET) and answers the record and whether it is new; it adds
// the prefix to the registry in the same round trip. Under
// WithExistingPrefix it only reads the record, and answers a
// *PrefixUnknownError when there is none.
func (s *Store) recordLayout(ctx context.Context, want string) (got string, fresh bool, err error) {
	key := s.keys.layout()
	if s.cfg.existingPrefix {
		got, err = s.client.Get(ctx, key).Result()
		if errors.Is(err, redis.Nil) {
			return "", false, s.prefixUnknown(ctx)
		}
		if err != nil {
			return "", false, fmt.Errorf("redisstore: reading the layout: %w", mapErr(err))
		}
		_ = s.client.SAdd(ctx, prefixRegistry, s.cfg.prefix).Err() // best effort, as below
		return got, false, nil
	}
	var set *redis.StatusCmd
	_, _ = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		set = p.SetArgs(ctx, key, want, redis.SetArgs{Mode: "NX", Get: true})
		p.SAdd(ctx, prefixRegistry, s.cfg.prefix) // its error is not the store's
		return nil
	})
	got, err = set.Result()
	if errors.Is(err, redis.Nil) {
		return want, true, nil // recorded now
	}
	if err != nil {
		return "", false, fmt.Errorf("redisstore: recording the layout: %w", mapErr(err))
	}
	return got, false, nil
}

// prefixUnknown builds the error of an unknown prefix, with the known ones
// when the registry can be read.
func (s *Store) prefixUnknown(ctx context.Context) error {
	e := &PrefixUnknownError{Prefix: s.cfg.prefix}
	var total *redis.IntCmd
	var some *redis.StringSliceCmd
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		total = p.SCard(ctx, prefixRegistry)
		some = p.SRandMemberN(ctx, prefixRegistry, knownListed)
		return nil
	})
	if err == nil {
		e.Known, e.Total = some.Val(), int(total.Val())
		slices.Sort(e.Known)
	}
	return e
}
