package inspector

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// startLimit is the floor under how fast one client starts actions: a
// token bucket per client of burst tokens, one more every interval.
type startLimit struct {
	mu      sync.Mutex
	burst   int
	every   time.Duration
	clients map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// startLimitClients bounds the buckets kept; past it the full ones (which
// a fresh bucket would equal) are dropped.
const startLimitClients = 10_000

func newStartLimit(burst int, every time.Duration) *startLimit {
	return &startLimit{burst: burst, every: every, clients: map[string]*bucket{}}
}

// take spends one start of client at now, or answers how long until one
// is there.
func (l *startLimit) take(client string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.clients[client]
	if b == nil {
		if len(l.clients) >= startLimitClients {
			l.dropFull(now)
		}
		b = &bucket{tokens: float64(l.burst), at: now}
		l.clients[client] = b
	}
	l.refill(b, now)
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) * float64(l.every)), false
	}
	b.tokens--
	return 0, true
}

func (l *startLimit) refill(b *bucket, now time.Time) {
	if now.After(b.at) {
		b.tokens = math.Min(float64(l.burst), b.tokens+float64(now.Sub(b.at))/float64(l.every))
		b.at = now
	}
}

func (l *startLimit) dropFull(now time.Time) {
	for k, b := range l.clients {
		if l.refill(b, now); b.tokens >= float64(l.burst) {
			delete(l.clients, k)
		}
	}
}

// clientOf names the client of r for the start limit: the host of its
// remote address.
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// admitStart spends a start of r's client, or answers 429 with
// Retry-After (whole seconds, at least 1) and false.
func (h *handler) admitStart(w http.ResponseWriter, r *http.Request) bool {
	wait, ok := h.starts.take(clientOf(r), h.now())
	if ok {
		return true
	}
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	h.fail(w, r, &apiError{status: http.StatusTooManyRequests, code: "rate_limited",
		message: "actions are started too fast; try again in " + strconv.Itoa(secs) + "s"})
	return false
}
