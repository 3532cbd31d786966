package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// firstContact bounds the PING that opens New: long enough for a dial,
// TLS and AUTH to any reachable server, short enough that a server that is
// down fails New at once instead of after every later step's retries.
const firstContact = 1500 * time.Millisecond

// ErrUnreachable is the category of [*UnreachableError].
var ErrUnreachable = errors.New("redisstore: cannot reach Redis")

// UnreachableError is returned by [New] when its first contact with the
// server, one PING bounded by 1.5 s or the context's deadline, whichever
// is sooner, gets no answer. It matches [ErrUnreachable] with errors.Is and
// unwraps to the client's error (such as a *net.OpError, or
// context.DeadlineExceeded when nothing answered in time).
type UnreachableError struct {
	// Addrs are the addresses of the client's options, as go-redis keeps
	// them; empty for a client whose options New cannot read.
	Addrs []string
	// Err is the client's error.
	Err error
}

// Error names the addresses and the cause.
func (e *UnreachableError) Error() string {
	where := "the client's server"
	if len(e.Addrs) > 0 {
		where = strings.Join(e.Addrs, ", ")
	}
	return fmt.Sprintf("redisstore: cannot reach Redis at %s: %v", where, e.Err)
}

// Is matches [ErrUnreachable].
func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// Unwrap returns the client's error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// reach is New's first contact: one PING under its own deadline. A server
// that answers with an error is reached; one refusing the client (AUTH, a
// loading dataset) is reported as such, one whose ACL forbids PING is let
// through to the steps that need it.
func (s *Store) reach(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, firstContact)
	defer cancel()
	err := s.client.Ping(pctx).Err()
	var reply redis.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &reply):
		if strings.HasPrefix(err.Error(), "NOPERM") {
			return nil
		}
		return fmt.Errorf("redisstore: Redis at %s answered PING with an error: %w", strings.Join(clientAddrs(s.client), ", "), err)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		// The client retried until the deadline and answers only that;
		// one dial of its own says why (connection refused, no route).
		switch connected, cause := probe(ctx, s.client); {
		case cause != nil:
			err = cause
		case connected:
			err = fmt.Errorf("connected, but no answer to PING within %v: %w", firstContact, err)
		default:
			err = fmt.Errorf("no answer to PING within %v: %w", firstContact, err)
		}
	}
	return &UnreachableError{Addrs: clientAddrs(s.client), Err: err}
}

// probeTimeout bounds the dial of probe.
const probeTimeout = 500 * time.Millisecond

// probe dials the client's first address once, with the client's dialer
// when its options hold one, and answers the dial's error, or whether it
// connected (it closes the connection); neither when the client's options
// name no address or the dial takes longer than probeTimeout. A dialer
// that ignores contexts (go-redis's TLS one) is waited on for probeTimeout
// at most, and closes what it dials later.
func probe(ctx context.Context, c redis.UniversalClient) (connected bool, err error) {
	type dialer = func(context.Context, string, string) (net.Conn, error)
	var dial dialer
	network, addr := "tcp", ""
	switch c := c.(type) {
	case *redis.Client:
		dial, network, addr = c.Options().Dialer, c.Options().Network, c.Options().Addr
	case *redis.ClusterClient:
		dial = c.Options().Dialer
	case *redis.Ring:
		dial = c.Options().Dialer
	}
	if addrs := clientAddrs(c); addr == "" && len(addrs) > 0 {
		addr = addrs[0]
	}
	if addr == "" {
		return false, nil
	}
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	done := make(chan error, 1)
	go func() {
		defer cancel()
		conn, err := dial(ctx, network, addr)
		if conn != nil {
			_ = conn.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err == nil, err
	case <-time.After(probeTimeout):
		return false, nil
	}
}

// lostContact answers err as an *UnreachableError when the client made it
// (the connection failed), and nil when it is the server's reply.
func (s *Store) lostContact(err error) error {
	var reply redis.Error
	if err == nil || errors.As(err, &reply) {
		return nil
	}
	return &UnreachableError{Addrs: clientAddrs(s.client), Err: err}
}

// clientAddrs reads the server addresses from the options of the client
// kinds of go-redis; a Sentinel failover client keeps its sentinels'
// addresses to itself.
func clientAddrs(c redis.UniversalClient) []string {
	switch c := c.(type) {
	case *redis.Client:
		if a := c.Options().Addr; a != "FailoverClient" {
			return []string{a}
		}
		return []string{"the master of a Sentinel failover client"}
	case *redis.ClusterClient:
		return slices.Clone(c.Options().Addrs)
	case *redis.Ring:
		var out []string
		for _, a := range c.Options().Addrs {
			out = append(out, a)
		}
		slices.Sort(out)
		return out
	}
	return nil
}
