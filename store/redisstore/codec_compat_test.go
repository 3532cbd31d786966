package redisstore

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/plaitdag/plait/fakeclock"
	"github.com/plaitdag/plait/store"
)

// The golden records in testdata/run_v<N>.txt are run hashes exactly as the
// store of format version N wrote them. Every later store must read them
// into the same run and task specs: a stored run survives an upgrade.
// go test -run TestGoldenRecords -update-golden writes the file of the
// current version from the scenario below; the files of older versions are
// never rewritten.

var updateGolden = flag.Bool("update-golden", false, "write testdata/run_v<current>.txt from the golden scenario")

// goldenStart is the fake clock's first reading in the golden scenario.
var goldenStart = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// goldenWorkflow is the workflow of the golden run: dependencies of every
// condition, a retry policy, an inline, a compressed and a kept-apart
// payload, a nil and an empty payload, a due time and a delay. The task
// that ends (fetch) has no payload: a payload kept apart is deleted when
// its task ends.
func goldenWorkflow() *store.WorkflowSpec {
	return &store.WorkflowSpec{Name: "golden", Strategy: store.StrategyStop, Tasks: []store.TaskSpec{
		{
			Name: "fetch", Handler: "fetcher", Queue: "io",
			Priority: store.PriorityHigh,
			Retry: store.RetryPolicy{MaxAttempts: 3, Backoff: store.BackoffExponential, InitialInterval: 1500 * time.Millisecond,
				MaxInterval: time.Minute, Multiplier: 2, Jitter: 0.1, MaxElapsed: time.Hour},
			Timeout: 30 * time.Second, Requires: []string{"net", "ssd"},
		},
		{
			Name: "parse", Handler: "parser", Queue: store.DefaultQueue,
			Payload: []byte("\x00\x01\x02 an incompressible-ish payload kept apart: 9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
			Deps:    []store.Dep{{Task: "fetch", On: store.OnSuccess}},
		},
		{
			Name: "report", Handler: "reporter", Queue: store.DefaultQueue, Priority: store.PriorityUrgent,
			Payload: []byte(strings.Repeat("report line; ", 20)),
			Deps:    []store.Dep{{Task: "fetch", On: store.OnCompletion}, {Task: "parse", On: store.OnFailure}},
			Join:    store.JoinAny, RunAt: time.Date(2030, 1, 1, 1, 0, 0, 123456789, time.UTC), Delay: 250 * time.Millisecond,
		},
		{
			Name: "notify", Handler: "notifier", Queue: store.DefaultQueue, Priority: store.PriorityLow, Payload: []byte{},
			Deps: []store.Dep{{Task: "report"}},
		},
		{Name: "audit", Handler: "auditor", Queue: "io", Payload: []byte("x=1")},
	}}
}

// goldenRun is the run the golden records of format version v hold:
// before version 4 an attempt record kept no retry delay, before version 6
// no queued time. From version 8 fetch's final attempt has no record (it
// is folded into the task's state) and decodes the same.
func goldenRun(v int) *store.Run {
	var delay time.Duration
	if v >= 4 {
		delay = 2 * time.Second
	}
	firstOutcome := "retry"
	if v >= 5 {
		firstOutcome = "timed out"
	}
	at := func(ms int64) time.Time { return goldenStart.Add(time.Duration(ms) * time.Millisecond) }
	var queued [2]time.Time
	if v >= 6 {
		queued = [2]time.Time{at(0), at(3500)}
	}
	return &store.Run{
		ID: "1", Key: "order-42", Workflow: "golden", Strategy: store.StrategyStop, Status: store.RunRunning,
		Tenant: "acme", Service: "billing", Metadata: map[string]string{"region": "eu", "owner": "ops", "": "empty key"},
		Total: 5, Succeeded: 1,
		CreatedAt: at(0), StartedAt: at(1000),
		Tasks: []store.TaskInstance{
			{
				Name: "fetch", Handler: "fetcher", Queue: "io", Status: store.TaskSucceeded, Attempt: 2, Epoch: 2,
				Worker: "w1", Result: []byte("fetched body"), StartedAt: at(1000), EndedAt: at(4500),
				Attempts: []store.Attempt{
					{Attempt: 1, Epoch: 1, QueuedAt: queued[0], StartedAt: at(1000), EndedAt: at(1500), Duration: 500 * time.Millisecond, Outcome: firstOutcome, Worker: "w1", Error: "timeout", RetryDelay: delay},
					{Attempt: 2, Epoch: 2, QueuedAt: queued[1], StartedAt: at(4000), EndedAt: at(4500), Duration: 500 * time.Millisecond, Outcome: "succeeded", Worker: "w1"},
				},
			},
			{Name: "parse", Handler: "parser", Queue: store.DefaultQueue, Status: store.TaskRunning, Attempt: 1, Epoch: 1, Worker: "w2", StartedAt: at(5000)},
			{Name: "report", Handler: "reporter", Queue: store.DefaultQueue, Status: store.TaskPending},
			{Name: "notify", Handler: "notifier", Queue: store.DefaultQueue, Status: store.TaskPending},
			{Name: "audit", Handler: "auditor", Queue: "io", Status: store.TaskReady},
		},
	}
}

// goldenRecords is one golden file: the run hash's fields and the payload
// keys of tasks whose payload is kept apart.
type goldenRecords struct {
	hash     map[string]string
	payloads map[string]string
}

// writeGolden plays the golden scenario on miniredis with the current code,
// given opts, and returns what it stored.
func writeGolden(t *testing.T, opts ...Option) goldenRecords {
	ctx := context.Background()
	m := miniredis.RunT(t)
	m.SetTime(goldenStart)
	clk := fakeclock.New(goldenStart)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	s, err := New(ctx, c, append([]Option{WithClock(clk), WithCompression(64), WithLogger(discardLogger())}, opts...)...)
	require.NoError(t, err)
	created, err := s.RunCreate(ctx, &store.RunCreateParams{Workflow: goldenWorkflow(), Key: "order-42",
		Tenant: "acme", Service: "billing", Metadata: goldenRun(formatVersion).Metadata})
	require.NoError(t, err)
	id := created.Run.ID
	claim := func(worker string, queues ...string) *store.ClaimedTask {
		t.Helper()
		res, err := s.TaskClaim(ctx, &store.TaskClaimParams{WorkerID: worker, Queues: queues, Limit: 1, LeaseDuration: time.Minute})
		require.NoError(t, err)
		require.Len(t, res.Tasks, 1)
		return res.Tasks[0]
	}
	finish := func(o store.TaskOutcome) {
		t.Helper()
		res, err := s.TaskFinish(ctx, &store.TaskFinishParams{Outcomes: []store.TaskOutcome{o}})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
	}
	clk.Advance(time.Second)
	ct := claim("w1", "io+net+ssd")
	require.Equal(t, "fetch", ct.Lease.Task)
	clk.Advance(500 * time.Millisecond)
	finish(store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeRetry, Error: "timeout", RetryDelay: 2 * time.Second, TimedOut: true})
	clk.Advance(2500 * time.Millisecond)
	ct = claim("w1", "io+net+ssd")
	require.Equal(t, "fetch", ct.Lease.Task)
	clk.Advance(500 * time.Millisecond)
	finish(store.TaskOutcome{Lease: ct.Lease, Outcome: store.OutcomeSucceeded, Result: []byte("fetched body")})
	clk.Advance(500 * time.Millisecond)
	ct = claim("w2", store.DefaultQueue)
	require.Equal(t, "parse", ct.Lease.Task)

	shard, err := s.runShard(id)
	require.NoError(t, err)
	g := goldenRecords{payloads: map[string]string{}}
	g.hash, err = c.HGetAll(ctx, s.keys.run(shard, id)).Result()
	require.NoError(t, err)
	for _, task := range goldenWorkflow().Tasks {
		p, err := c.Get(ctx, s.keys.payload(shard, id, task.Name)).Result()
		if err == nil {
			g.payloads[task.Name] = p
		}
	}
	return g
}

// saveGolden writes g as lines of: kind, quoted name, quoted value.
func saveGolden(path string, g goldenRecords) error {
	var b strings.Builder
	b.WriteString("# A run hash as written by plait's Redis store, format version " + strconv.Itoa(formatVersion) + ".\n")
	b.WriteString("# Each line: hash|payload, then the field or task name and the value, Go-quoted.\n")
	for _, set := range []struct {
		kind string
		m    map[string]string
	}{{"hash", g.hash}, {"payload", g.payloads}} {
		names := make([]string, 0, len(set.m))
		for k := range set.m {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			fmt.Fprintf(&b, "%s %s %s\n", set.kind, strconv.Quote(k), strconv.Quote(set.m[k]))
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// loadGolden reads a file saveGolden wrote.
func loadGolden(path string) (goldenRecords, error) {
	g := goldenRecords{hash: map[string]string{}, payloads: map[string]string{}}
	f, err := os.Open(path)
	if err != nil {
		return g, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		kind, rest, _ := strings.Cut(line, " ")
		name, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return g, fmt.Errorf("%s: %q: %w", path, line, err)
		}
		value := strings.TrimPrefix(rest[len(name):], " ")
		if name, err = strconv.Unquote(name); err == nil {
			value, err = strconv.Unquote(value)
		}
		if err != nil {
			return g, fmt.Errorf("%s: %q: %w", path, line, err)
		}
		switch kind {
		case "hash":
			g.hash[name] = value
		case "payload":
			g.payloads[name] = value
		default:
			return g, fmt.Errorf("%s: unknown kind %q", path, kind)
		}
	}
	return g, sc.Err()
}

// TestGoldenRecords decodes the run hashes every earlier format version
// wrote into the run and task specs they hold.
func TestGoldenRecords(t *testing.T) {
	current := filepath.Join("testdata", "run_v"+strconv.Itoa(formatVersion)+".txt")
	if *updateGolden {
		require.NoError(t, saveGolden(current, writeGolden(t)))
	}
	files, err := filepath.Glob(filepath.Join("testdata", "run_v*.txt"))
	require.NoError(t, err)
	require.Contains(t, files, current, "the current format version has its golden file")
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			g, err := loadGolden(path)
			require.NoError(t, err)
			run, err := decodeRun("1", g.hash)
			require.NoError(t, err)
			v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "run_v"), ".txt"))
			require.NoError(t, err)
			require.Equal(t, goldenRun(v), run)
			for _, want := range goldenWorkflow().Tasks {
				got, err := decodeTaskDef(want.Name, g.hash["d:"+want.Name], g.hash["u:"+want.Name], g.payloads[want.Name], false)
				require.NoError(t, err, want.Name)
				require.Equal(t, want, got, want.Name)
			}
		})
	}
}

// TestGoldenRecordsCurrent checks that the current code still writes what
// the current version's golden file holds, so a format change cannot slip
// in without a new version and a new golden file.
func TestGoldenRecordsCurrent(t *testing.T) {
	g, err := loadGolden(filepath.Join("testdata", "run_v"+strconv.Itoa(formatVersion)+".txt"))
	require.NoError(t, err)
	require.Equal(t, inflated(t, g), inflated(t, writeGolden(t)))
}

// TestGoldenRecordsPrevious checks that a store told to write the previous
// format version (for a rolling upgrade) writes exactly what that
// version's golden file holds: what a plait of that version wrote, and
// reads.
func TestGoldenRecordsPrevious(t *testing.T) {
	g, err := loadGolden(filepath.Join("testdata", "run_v"+strconv.Itoa(FormatVersionPrevious)+".txt"))
	require.NoError(t, err)
	require.Equal(t, inflated(t, g), inflated(t, writeGolden(t, WithFormatVersion(FormatVersionPrevious))))
}

// inflated returns the records with every compressed payload decoded. The
// bytes compress/flate writes differ between Go releases (a few bytes of
// block framing), while what they decode to, and the layout around them,
// is the format.
func inflated(t *testing.T, g goldenRecords) goldenRecords {
	t.Helper()
	out := goldenRecords{hash: g.hash, payloads: make(map[string]string, len(g.payloads))}
	for name, v := range g.payloads {
		if len(v) > 0 && v[0] == valueDeflate {
			b, err := decodeValue(v)
			require.NoError(t, err, name)
			v = "inflated:" + string(b)
		}
		out.payloads[name] = v
	}
	return out
}

// withVersion returns the golden records with the version byte of field i
// and of every definition body set to v, and every other field the version
// governs replaced by garbage, as a layout this code does not know would
// look to it.
func withVersion(t *testing.T, v byte) goldenRecords {
	g, err := loadGolden(filepath.Join("testdata", "run_v"+strconv.Itoa(formatVersion)+".txt"))
	require.NoError(t, err)
	for k, val := range g.hash {
		switch {
		case k == "i":
			g.hash[k] = string([]byte{v}) + val[1:]
		case strings.HasPrefix(k, "d:"):
			head, body, _ := strings.Cut(val, "\n")
			g.hash[k] = "new;header;layout" + head + "\n" + string([]byte{v}) + body[1:]
		case k == "m" || strings.HasPrefix(k, "s:") || strings.HasPrefix(k, "a:"):
			g.hash[k] = "a layout of version " + strconv.Itoa(int(v))
		}
	}
	return g
}

// TestRecordVersionRefused checks that a run hash of a version this code
// does not read is refused with the typed error, naming the version, and
// is never decoded as garbage or reported as a mere corrupt field.
func TestRecordVersionRefused(t *testing.T) {
	for _, v := range []byte{formatVersion + 1, 255, minFormatVersion - 1, 0} {
		g := withVersion(t, v)
		_, err := decodeRun("1", g.hash)
		require.ErrorIs(t, err, ErrRecordVersion, "version %d", v)
		require.ErrorIs(t, err, errCorrupt, "a claim or a sweep skips it as it skips a corrupt record")
		var ve *RecordVersionError
		require.True(t, errors.As(err, &ve))
		require.Equal(t, RecordVersionError{Record: "run info", Version: int(v), Min: minFormatVersion, Max: formatVersion}, *ve)
		if v > formatVersion {
			require.Contains(t, err.Error(), "written by a newer plait; upgrade plait")
		} else {
			require.Contains(t, err.Error(), "older than")
		}

		for _, task := range goldenWorkflow().Tasks {
			_, err := decodeTaskDef(task.Name, g.hash["d:"+task.Name], g.hash["u:"+task.Name], g.payloads[task.Name], false)
			require.True(t, errors.As(err, &ve), "%s: %v", task.Name, err)
			require.Equal(t, "task definition", ve.Record)
			require.Equal(t, int(v), ve.Version)
		}
	}
}

// TestRecordVersionRefusedByStore reads a run hash of a newer version
// through the store: RunGet answers the typed error.
func TestRecordVersionRefusedByStore(t *testing.T) {
	ctx := context.Background()
	c := miniClient(t)
	s, err := New(ctx, c, WithLogger(discardLogger()))
	require.NoError(t, err)
	g := withVersion(t, formatVersion+1)
	fields := make([]any, 0, 2*len(g.hash))
	for k, v := range g.hash {
		fields = append(fields, k, v)
	}
	require.NoError(t, c.HSet(ctx, s.keys.run(0, "1"), fields...).Err())
	_, err = s.RunGet(ctx, &store.RunGetParams{ID: "1"})
	require.ErrorIs(t, err, ErrRecordVersion)
	require.Contains(t, err.Error(), "upgrade plait")
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
