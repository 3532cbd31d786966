// Package faultproxy is a loopback TCP proxy that injects the network
// faults a Redis client meets in production: a reply lost after the server
// executed the command, a connection that hangs, a connection cut. Tests put
// it between a store and a real redis-server, or makes the network slow:
// every chunk held back a delay drawn from a range.
//
// It relies on one property of the clients it serves: on one connection a
// command's reply is read before the next command is sent (go-redis does
// this outside pipelines). So the first bytes the server sends after a
// request are that request's reply.
package faultproxy

import (
	"bytes"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Proxy forwards every connection it accepts to one target address. Its
// methods are safe for concurrent use.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns map[*link]struct{}
	// dropOn, when set, marks the next request containing it: the server
	// runs the request, and its reply is thrown away with the connection.
	dropOn []byte
	// dropped counts replies thrown away.
	dropped int
	// stalled holds back every byte, both ways, until Resume closes it.
	stalled chan struct{}
	// delay, when set, draws the time each chunk is held back.
	delay *delay
	// done is closed by Close: it ends every delay under way.
	done   chan struct{}
	closed bool
	wg     sync.WaitGroup
}

// delay draws hold-back durations in [min, max] from a seeded source, so
// a test's latencies are the same from run to run for one seed (the order
// in which connections draw still varies).
type delay struct {
	min, max time.Duration
	rnd      *rand.Rand
}

// link is one proxied connection.
type link struct {
	client, server net.Conn
	// dropReply is set when the request just forwarded must lose its reply.
	dropReply bool
}

// Start listens on a free loopback port and forwards to target.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[*link]struct{}{}, done: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address clients dial instead of the target's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// DropReplyTo makes the next request whose bytes contain marker (compared
// without case: clients send command names in either case) reach the
// server and run there, and then lose its reply: the proxy discards it and
// cuts that connection, so the client sees a network error for a command
// that took effect.
func (p *Proxy) DropReplyTo(marker string) {
	p.mu.Lock()
	p.dropOn = bytes.ToLower([]byte(marker))
	p.mu.Unlock()
}

// Dropped reports how many replies were thrown away.
func (p *Proxy) Dropped() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

// Stall holds back every byte in both directions, on open connections and
// new ones, until Resume: a network that hangs without failing.
func (p *Proxy) Stall() {
	p.mu.Lock()
	if p.stalled == nil {
		p.stalled = make(chan struct{})
	}
	p.mu.Unlock()
}

// Resume lets bytes flow again after Stall.
func (p *Proxy) Resume() {
	p.mu.Lock()
	if p.stalled != nil {
		close(p.stalled)
		p.stalled = nil
	}
	p.mu.Unlock()
}

// Delay holds back every chunk forwarded from now on, requests and
// replies alike, for a duration drawn uniformly from [min, max] with a
// source seeded by seed: a slow network. A round trip through the proxy
// is held back twice, once each way. Chunks of one connection keep their
// order: each waits out its delay before the next one of that direction
// is read. Delay(0, 0, 0) turns the latency off again.
func (p *Proxy) Delay(min, max time.Duration, seed uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if max <= 0 {
		p.delay = nil
		return
	}
	if min > max {
		min = max
	}
	p.delay = &delay{min: min, max: max, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// holdBack waits out the delay of one chunk, if any; it reports false
// once the proxy is closed.
func (p *Proxy) holdBack() bool {
	p.mu.Lock()
	var d time.Duration
	if p.delay != nil {
		d = p.delay.min
		if span := p.delay.max - p.delay.min; span > 0 {
			d += time.Duration(p.delay.rnd.Int64N(int64(span) + 1))
		}
	}
	p.mu.Unlock()
	if d <= 0 {
		return true
	}
	// The delay is the fault injected, not a wait for a condition.
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.done:
		return false
	}
}

// Conns reports how many connections are open through the proxy.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Cut closes every open connection; new ones are still accepted.
func (p *Proxy) Cut() {
	p.mu.Lock()
	for l := range p.conns {
		l.client.Close()
		l.server.Close()
		delete(p.conns, l)
	}
	p.mu.Unlock()
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.done)
	}
	p.mu.Unlock()
	p.Resume()
	err := p.ln.Close()
	p.Cut()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		l := &link{client: c, server: s}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			s.Close()
			return
		}
		p.conns[l] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pump(l, true)
		go p.pump(l, false)
	}
}

// gate waits while the proxy is stalled; it reports false once the proxy
// is closed.
func (p *Proxy) gate() bool {
	for {
		p.mu.Lock()
		ch, closed := p.stalled, p.closed
		p.mu.Unlock()
		if closed {
			return false
		}
		if ch == nil {
			return true
		}
		<-ch
	}
}

// pump copies one direction of a link: client to server when up, server
// to client otherwise.
func (p *Proxy) pump(l *link, up bool) {
	defer p.wg.Done()
	src, dst := l.server, l.client
	if up {
		src, dst = l.client, l.server
	}
	defer func() {
		l.client.Close()
		l.server.Close()
		p.mu.Lock()
		delete(p.conns, l)
		p.mu.Unlock()
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.gate() || !p.holdBack() {
				return
			}
			if !p.forward(l, up, dst, buf[:n]) {
				return
			}
		}
		if err != nil {
			// EOF or a cut: either way the link is over, both ways.
			return
		}
	}
}

// forward writes one chunk on, applying a pending reply drop; it reports
// false when the link must end.
func (p *Proxy) forward(l *link, up bool, dst net.Conn, b []byte) bool {
	p.mu.Lock()
	if up && p.dropOn != nil && bytes.Contains(bytes.ToLower(b), p.dropOn) {
		p.dropOn = nil
		l.dropReply = true
	}
	drop := !up && l.dropReply
	if drop {
		l.dropReply = false
		p.dropped++
	}
	p.mu.Unlock()
	if drop {
		return false
	}
	_, err := dst.Write(b)
	return err == nil
}
