package storetest

import (
	"testing"
	"time"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

// testNodes is the suite of [store.NodeStore]: the node registry, its
// expiry on the store's clock, its index by capability, the history of
// each node, and the control flags (drain, paused queues).
func testNodes(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{"Register", "a heartbeat registers a node with what it reports, started and seen now, expiring TTL later", testNodeRegister},
		{"Refresh", "a later heartbeat replaces what the node reports and keeps its start", testNodeRefresh},
		{"Expiry", "a node without a heartbeat for its TTL is gone from every read, and its next heartbeat registers it anew", testNodeExpiry},
		{"ByCapability", "the nodes of a capability are exactly the live nodes that declared it", testNodeByCapability},
		{"Remove", "a removed node is gone from every read at once", testNodeRemove},
		{"History", "each history entry is kept once, newest first, up to the limit, however often a heartbeat is sent", testNodeHistory},
		{"Drain", "a drain request reaches the node in its next heartbeat's answer, and only a live node can be told", testNodeDrain},
		{"Pause", "a pause or resume moves the control version once, and a heartbeat answers the paused queues when its version is behind", testNodePause},
		{"Invalid", "a heartbeat with a bad id, TTL or history limit is refused and writes nothing", testNodeInvalid},
	})
}

// nodeTTL is long enough that no real expiry (a redis-server's own TTLs
// run on its wall clock) can interfere with a case.
const nodeTTL = 30 * time.Second

func nodeInfo(id string, caps ...string) store.NodeInfo {
	return store.NodeInfo{
		ID: id, Name: "worker-" + id, Host: "host-1", PID: 4242, Version: "v1.2.3",
		Capabilities: caps, Queues: []string{store.DefaultQueue, "mail"}, Handlers: []string{"extract", "load"},
		Capacity: 8, Load: 2, Completed: 10, Failed: 1,
		Tasks: []store.NodeTask{{RunID: "17-abc", Task: "extract", Attempt: 1, StartedAt: time.UnixMilli(1_900_000_000_123).UTC()}},
	}
}

func beat(t *testing.T, h *Harness, info store.NodeInfo, rule string, hist ...store.NodeTask) *store.NodeHeartbeatResult {
	t.Helper()
	res, err := h.Store.(store.NodeStore).NodeHeartbeat(bg, &store.NodeHeartbeatParams{Node: info, TTL: nodeTTL, History: hist, HistoryLimit: 3})
	require.NoError(t, err, rule)
	return res
}

func getNode(t *testing.T, h *Harness, id, rule string) *store.NodeRecord {
	t.Helper()
	r, err := h.Store.(store.NodeStore).NodeGet(bg, &store.NodeGetParams{ID: id})
	require.NoError(t, err, rule)
	return r
}

func nodeIDs(t *testing.T, h *Harness, capability, rule string) []string {
	t.Helper()
	res, err := h.Store.(store.NodeStore).NodeList(bg, &store.NodeListParams{Capability: capability})
	require.NoError(t, err, rule)
	out := []string{}
	for _, n := range res.Nodes {
		out = append(out, n.ID)
	}
	return out
}

func testNodeRegister(t *testing.T, h *Harness, rule string) {
	info := nodeInfo("n1", "gpu", "region-eu")
	res := beat(t, h, info, rule)
	require.False(t, res.Drain, rule)
	sameTime(t, h.Now(), res.Now, rule)
	r := getNode(t, h, "n1", rule)
	require.Equal(t, info, r.NodeInfo, rule)
	sameTime(t, h.Now(), r.StartedAt, rule)
	sameTime(t, h.Now(), r.HeartbeatAt, rule)
	sameTime(t, h.Now().Add(nodeTTL), r.ExpiresAt, rule)
	require.False(t, r.DrainRequested, rule)
	require.Empty(t, r.History, rule)
	require.Equal(t, []string{"n1"}, nodeIDs(t, h, "", rule), rule)
}

func testNodeRefresh(t *testing.T, h *Harness, rule string) {
	beat(t, h, nodeInfo("n1"), rule)
	start := h.Now()
	h.Advance(5 * time.Second)
	info := nodeInfo("n1")
	info.Load, info.Completed, info.Tasks, info.Draining = 0, 12, nil, true
	beat(t, h, info, rule)
	r := getNode(t, h, "n1", rule)
	require.Equal(t, info, r.NodeInfo, rule)
	sameTime(t, start, r.StartedAt, rule)
	sameTime(t, h.Now(), r.HeartbeatAt, rule)
	sameTime(t, h.Now().Add(nodeTTL), r.ExpiresAt, rule)
}

func testNodeExpiry(t *testing.T, h *Harness, rule string) {
	ns := h.Store.(store.NodeStore)
	beat(t, h, nodeInfo("n1", "gpu"), rule)
	beat(t, h, nodeInfo("n2", "gpu"), rule)
	h.Advance(nodeTTL - time.Second)
	beat(t, h, nodeInfo("n2", "gpu"), rule)
	h.Advance(time.Second)
	_, err := ns.NodeGet(bg, &store.NodeGetParams{ID: "n1"})
	require.ErrorIs(t, err, store.ErrNotFound, rule)
	require.Equal(t, []string{"n2"}, nodeIDs(t, h, "", rule), rule)
	require.Equal(t, []string{"n2"}, nodeIDs(t, h, "gpu", rule), rule)
	require.ErrorIs(t, ns.NodeDrain(bg, &store.NodeDrainParams{ID: "n1"}), store.ErrNotFound, rule)
	beat(t, h, nodeInfo("n1", "gpu"), rule)
	sameTime(t, h.Now(), getNode(t, h, "n1", rule).StartedAt, rule)
	require.Equal(t, []string{"n1", "n2"}, nodeIDs(t, h, "gpu", rule), rule)
}

func testNodeByCapability(t *testing.T, h *Harness, rule string) {
	beat(t, h, nodeInfo("a", "gpu"), rule)
	beat(t, h, nodeInfo("b", "gpu", "region-eu"), rule)
	beat(t, h, nodeInfo("c"), rule)
	require.Equal(t, []string{"a", "b", "c"}, nodeIDs(t, h, "", rule), rule)
	require.Equal(t, []string{"a", "b"}, nodeIDs(t, h, "gpu", rule), rule)
	require.Equal(t, []string{"b"}, nodeIDs(t, h, "region-eu", rule), rule)
	require.Empty(t, nodeIDs(t, h, "tpu", rule), rule)
	res, err := h.Store.(store.NodeStore).NodeList(bg, &store.NodeListParams{Capability: "gpu"})
	require.NoError(t, err, rule)
	require.Equal(t, []string{"gpu", "region-eu"}, res.Nodes[1].Capabilities, rule)
}

func testNodeRemove(t *testing.T, h *Harness, rule string) {
	ns := h.Store.(store.NodeStore)
	beat(t, h, nodeInfo("a", "gpu"), rule)
	beat(t, h, nodeInfo("b", "gpu"), rule)
	require.NoError(t, ns.NodeRemove(bg, &store.NodeRemoveParams{ID: "a"}), rule)
	require.NoError(t, ns.NodeRemove(bg, &store.NodeRemoveParams{ID: "a"}), rule)
	require.NoError(t, ns.NodeRemove(bg, &store.NodeRemoveParams{ID: "never"}), rule)
	_, err := ns.NodeGet(bg, &store.NodeGetParams{ID: "a"})
	require.ErrorIs(t, err, store.ErrNotFound, rule)
	require.Equal(t, []string{"b"}, nodeIDs(t, h, "", rule), rule)
	require.Equal(t, []string{"b"}, nodeIDs(t, h, "gpu", rule), rule)
}

func testNodeHistory(t *testing.T, h *Harness, rule string) {
	at := time.UnixMilli(1_900_000_000_000).UTC()
	entry := func(seq int64, task string, o store.Outcome) store.NodeTask {
		return store.NodeTask{Seq: seq, RunID: "5-xyz", Task: task, Attempt: 1, Outcome: o,
			StartedAt: at.Add(time.Duration(seq) * time.Second), EndedAt: at.Add(time.Duration(seq)*time.Second + 250*time.Millisecond)}
	}
	e1, e2, e3, e4 := entry(1, "a", store.OutcomeSucceeded), entry(2, "b", store.OutcomeFailed), entry(3, "c", store.OutcomeRetry), entry(4, "d", store.OutcomeSucceeded)
	beat(t, h, nodeInfo("n1"), rule, e1, e2)
	beat(t, h, nodeInfo("n1"), rule, e1, e2) // a retry of the same heartbeat
	require.Equal(t, []store.NodeTask{e2, e1}, getNode(t, h, "n1", rule).History, rule)
	beat(t, h, nodeInfo("n1"), rule, e2, e3, e4)
	require.Equal(t, []store.NodeTask{e4, e3, e2}, getNode(t, h, "n1", rule).History, "the limit of 3 keeps the newest: "+rule)
	beat(t, h, nodeInfo("n1"), rule)
	require.Equal(t, []store.NodeTask{e4, e3, e2}, getNode(t, h, "n1", rule).History, rule)
}

func testNodeDrain(t *testing.T, h *Harness, rule string) {
	ns := h.Store.(store.NodeStore)
	require.ErrorIs(t, ns.NodeDrain(bg, &store.NodeDrainParams{ID: "n1"}), store.ErrNotFound, rule)
	beat(t, h, nodeInfo("n1"), rule)
	beat(t, h, nodeInfo("n2"), rule)
	require.NoError(t, ns.NodeDrain(bg, &store.NodeDrainParams{ID: "n1"}), rule)
	require.NoError(t, ns.NodeDrain(bg, &store.NodeDrainParams{ID: "n1"}), rule)
	require.True(t, getNode(t, h, "n1", rule).DrainRequested, rule)
	require.True(t, beat(t, h, nodeInfo("n1"), rule).Drain, rule)
	require.True(t, beat(t, h, nodeInfo("n1"), rule).Drain, "the request stays until the node leaves: "+rule)
	require.False(t, beat(t, h, nodeInfo("n2"), rule).Drain, rule)
	require.False(t, getNode(t, h, "n2", rule).DrainRequested, rule)
}

func testNodePause(t *testing.T, h *Harness, rule string) {
	ns := h.Store.(store.NodeStore)
	first := beat(t, h, nodeInfo("n1"), rule)
	require.Equal(t, []string{}, first.PausedQueues, "a node that knows no version gets the paused set, empty: "+rule)
	known := first.ControlVersion

	p, err := ns.QueuePause(bg, &store.QueuePauseParams{Queue: "mail"})
	require.NoError(t, err, rule)
	require.True(t, p.Changed, rule)
	require.NotEqual(t, known, p.ControlVersion, rule)
	again, err := ns.QueuePause(bg, &store.QueuePauseParams{Queue: "mail"})
	require.NoError(t, err, rule)
	require.False(t, again.Changed, rule)
	require.Equal(t, p.ControlVersion, again.ControlVersion, "a repeated pause changes nothing: "+rule)
	_, err = ns.QueuePause(bg, &store.QueuePauseParams{Queue: "bulk"})
	require.NoError(t, err, rule)

	res, err := ns.NodeHeartbeat(bg, &store.NodeHeartbeatParams{Node: nodeInfo("n1"), TTL: nodeTTL, HistoryLimit: 1, ControlVersion: known})
	require.NoError(t, err, rule)
	require.Equal(t, []string{"bulk", "mail"}, res.PausedQueues, rule)
	known = res.ControlVersion
	paused, err := ns.QueueListPaused(bg, &store.QueueListPausedParams{})
	require.NoError(t, err, rule)
	require.Equal(t, &store.QueueListPausedResult{Queues: []string{"bulk", "mail"}, ControlVersion: known}, paused, rule)

	res, err = ns.NodeHeartbeat(bg, &store.NodeHeartbeatParams{Node: nodeInfo("n1"), TTL: nodeTTL, HistoryLimit: 1, ControlVersion: known})
	require.NoError(t, err, rule)
	require.Nil(t, res.PausedQueues, "a node whose version is current gets nothing: "+rule)

	r, err := ns.QueuePause(bg, &store.QueuePauseParams{Queue: "mail", Resume: true})
	require.NoError(t, err, rule)
	require.True(t, r.Changed, rule)
	r2, err := ns.QueuePause(bg, &store.QueuePauseParams{Queue: "mail", Resume: true})
	require.NoError(t, err, rule)
	require.False(t, r2.Changed, rule)
	res, err = ns.NodeHeartbeat(bg, &store.NodeHeartbeatParams{Node: nodeInfo("n1"), TTL: nodeTTL, HistoryLimit: 1, ControlVersion: known})
	require.NoError(t, err, rule)
	require.Equal(t, []string{"bulk"}, res.PausedQueues, rule)
	require.Equal(t, r.ControlVersion, res.ControlVersion, rule)
	_, err = ns.QueuePause(bg, &store.QueuePauseParams{Queue: "a:b"})
	require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
}

func testNodeInvalid(t *testing.T, h *Harness, rule string) {
	ns := h.Store.(store.NodeStore)
	for _, p := range []*store.NodeHeartbeatParams{
		{Node: store.NodeInfo{ID: "a:b"}, TTL: nodeTTL, HistoryLimit: 1},
		{Node: store.NodeInfo{ID: ""}, TTL: nodeTTL, HistoryLimit: 1},
		{Node: store.NodeInfo{ID: "n1"}, TTL: 0, HistoryLimit: 1},
		{Node: store.NodeInfo{ID: "n1"}, TTL: nodeTTL, HistoryLimit: 0},
	} {
		_, err := ns.NodeHeartbeat(bg, p)
		require.ErrorIs(t, err, store.ErrInvalidArgument, rule)
	}
	require.Empty(t, nodeIDs(t, h, "", rule), rule)
	_, err := ns.NodeGet(bg, &store.NodeGetParams{ID: "a:b"})
	require.ErrorIs(t, err, store.ErrNotFound, rule)
}
