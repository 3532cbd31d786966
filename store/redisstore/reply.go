package redisstore

import (
	"fmt"
	"strconv"
)

// reply reads a script's flat reply.
type reply struct {
	v   []any
	i   int
	err error
}

func (r *reply) next() any {
	if r.i >= len(r.v) {
		if r.err == nil {
			r.err = fmt.Errorf("redisstore: script reply too short (%d values)", len(r.v))
		}
		return nil
	}
	x := r.v[r.i]
	r.i++
	return x
}

func (r *reply) str() string {
	switch x := r.next().(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case nil:
		return ""
	default:
		if r.err == nil {
			r.err = fmt.Errorf("redisstore: unexpected reply value %T", x)
		}
		return ""
	}
}

func (r *reply) int() int64 {
	switch x := r.next().(type) {
	case int64:
		return x
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil && r.err == nil {
			r.err = fmt.Errorf("redisstore: reply value %q is not an integer", x)
		}
		return n
	default:
		if r.err == nil {
			r.err = fmt.Errorf("redisstore: unexpected reply value %T", x)
		}
		return 0
	}
}
