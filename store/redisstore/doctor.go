package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
)

// The doctor: the settings of a Redis that depart from docs/operations.md,
// and the permissions its ACL user lacks. It sends only commands that read
// (INFO, CONFIG GET, CLUSTER INFO, ACL WHOAMI, ACL DRYRUN), and what a
// server refuses it reports as not checked, with Redis's reason, rather
// than failing: managed services often refuse CONFIG and ACL.

// Severity says how far a finding departs from the guide.
type Severity string

const (
	// SeverityError: a setting or permission that breaks plait's
	// guarantees or its calls (an evicting policy, a missing command).
	SeverityError Severity = "error"
	// SeverityWarning: a setting that can lose acknowledged writes
	// (persistence off, appendfsync no, no replica acknowledging writes).
	SeverityWarning Severity = "warning"
	// SeverityNote: worth knowing, departs from nothing (maxmemory 0).
	SeverityNote Severity = "note"
)

// DoctorParams says what [Doctor] checks.
type DoctorParams struct {
	// Prefix is the store's key prefix; "" is [PrefixDefault]. The
	// permission checks ask about a key and a channel under it.
	Prefix string
	// User is the ACL user whose permissions are checked; "" checks the
	// connected user (ACL WHOAMI). Checking another user needs a connected
	// user allowed ACL DRYRUN.
	User string
}

// Validate checks the prefix as [WithPrefix] does and that the user name
// is one word; the errors wrap [store.ErrInvalidArgument].
func (p *DoctorParams) Validate() error {
	if p == nil {
		return fmt.Errorf("redisstore: nil DoctorParams: %w", store.ErrInvalidArgument)
	}
	if p.Prefix != "" {
		if err := ids.Check(p.Prefix); err != nil {
			return fmt.Errorf("redisstore: doctor prefix %q: %s: %w", p.Prefix, prefixError(p.Prefix, err), store.ErrInvalidArgument)
		}
	}
	if strings.ContainsAny(p.User, " \t\r\n") {
		return fmt.Errorf("redisstore: doctor user %q holds a space: %w", p.User, store.ErrInvalidArgument)
	}
	return nil
}

// DoctorFinding is one setting or permission that departs from the guide.
type DoctorFinding struct {
	// Node is the server's address ("" when the client does not say).
	Node string `json:"node"`
	// Setting is the configuration parameter ("maxmemory-policy"), or
	// "redis_version", "cluster_state", or "acl <user> <command>" for a
	// permission.
	Setting string `json:"setting"`
	// Found is the value the server has, Want the one the guide asks for.
	Found string `json:"found"`
	Want  string `json:"want"`
	// Severity says how far it departs.
	Severity Severity `json:"severity"`
	// Message says what can go wrong, in one sentence.
	Message string `json:"message"`
}

// DoctorUnchecked is a check the server did not let [Doctor] make.
type DoctorUnchecked struct {
	Node    string `json:"node"`
	Setting string `json:"setting"`
	// Reason is why: Redis's refusal, or what was missing.
	Reason string `json:"reason"`
}

// DoctorFact is something the doctor read that departs from nothing: the
// version, the mode, a Cluster's state.
type DoctorFact struct {
	Node  string `json:"node"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// DoctorReport is what [Doctor] found, each list sorted by node then name.
type DoctorReport struct {
	Facts     []DoctorFact      `json:"facts"`
	Findings  []DoctorFinding   `json:"findings"`
	Unchecked []DoctorUnchecked `json:"unchecked"`
}

// Departs reports whether a finding is a warning or an error.
func (r *DoctorReport) Departs() bool {
	return slices.ContainsFunc(r.Findings, func(f DoctorFinding) bool { return f.Severity != SeverityNote })
}

// minVersion is the oldest Redis a store runs on: SET NX GET records the
// layout (7.0), and functions make a full Redis refuse a create or a claim
// whole.
var minVersion = [2]int{7, 0}

// Doctor checks every server client reaches (each node of a Cluster,
// replicas too, which a failover makes masters; the master of a Sentinel
// client) against docs/operations.md: maxmemory-policy noeviction,
// persistence on with appendfsync always or everysec, maxmemory set, on a
// master with replicas min-replicas-to-write above 0, Redis 7.0 or later,
// a Cluster's state ok, and an ACL user allowed every command of
// [Commands] on the prefix's keys and channels. Per node it sends one INFO,
// one CONFIG GET, a CLUSTER INFO on a Cluster, an ACL WHOAMI unless
// params.User is set, and one pipeline of len(Commands()) ACL DRYRUN.
// What a server refuses is a [DoctorUnchecked] with the reason: without
// CONFIG GET it reads what INFO tells. Doctor answers an error only for
// invalid params or a node it cannot reach.
func Doctor(ctx context.Context, client redis.UniversalClient, params *DoctorParams) (*DoctorReport, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	if client == nil {
		return nil, fmt.Errorf("redisstore: doctor: nil client: %w", store.ErrInvalidArgument)
	}
	prefix := params.Prefix
	if prefix == "" {
		prefix = PrefixDefault
	}
	rep := &DoctorReport{}
	var mu sync.Mutex
	check := func(ctx context.Context, c doctorConn, node string) error {
		n := &doctorNode{node: node, prefix: prefix, user: params.User}
		if err := n.run(ctx, c); err != nil {
			return fmt.Errorf("redisstore: doctor: %s: %w", node, err)
		}
		mu.Lock()
		defer mu.Unlock()
		rep.Facts = append(rep.Facts, n.rep.Facts...)
		rep.Findings = append(rep.Findings, n.rep.Findings...)
		rep.Unchecked = append(rep.Unchecked, n.rep.Unchecked...)
		return nil
	}
	var err error
	switch c := client.(type) {
	case *redis.ClusterClient:
		err = c.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error { return check(ctx, n, n.Options().Addr) })
	default:
		err = check(ctx, client, strings.Join(clientAddrs(client), ", "))
	}
	if err != nil {
		return nil, err
	}
	rep.sort()
	return rep, nil
}

func (r *DoctorReport) sort() {
	slices.SortStableFunc(r.Facts, func(a, b DoctorFact) int { return strings.Compare(a.Node, b.Node) })
	slices.SortStableFunc(r.Findings, func(a, b DoctorFinding) int { return strings.Compare(a.Node, b.Node) })
	slices.SortStableFunc(r.Unchecked, func(a, b DoctorUnchecked) int { return strings.Compare(a.Node, b.Node) })
}

// doctorConn is what the doctor sends its commands through: a client of
// one server.
type doctorConn interface {
	redis.Cmdable
	Do(ctx context.Context, args ...any) *redis.Cmd
	Process(ctx context.Context, cmd redis.Cmder) error
}

// doctorNode is the check of one server.
type doctorNode struct {
	node, prefix, user string
	rep                DoctorReport
	// info holds the fields of INFO, config those of CONFIG GET;
	// infoErr and configErr say why either is missing.
	info, config       map[string]string
	infoErr, configErr string
}

// why says why a setting could not be read: from CONFIG GET, and from
// INFO when it shows the setting too.
func (n *doctorNode) why(fromInfo bool) string {
	cfg := "CONFIG GET did not answer it"
	if n.configErr != "" {
		cfg = "CONFIG GET: " + n.configErr
	}
	switch {
	case !fromInfo:
		return cfg + "; INFO does not show it"
	case n.infoErr != "":
		return cfg + "; INFO: " + n.infoErr
	}
	return cfg + "; INFO did not show it"
}

func (n *doctorNode) fact(name, value string) {
	n.rep.Facts = append(n.rep.Facts, DoctorFact{Node: n.node, Name: name, Value: value})
}

func (n *doctorNode) find(sev Severity, setting, found, want, msg string) {
	n.rep.Findings = append(n.rep.Findings, DoctorFinding{Node: n.node, Setting: setting, Found: found, Want: want,
		Severity: sev, Message: msg})
}

func (n *doctorNode) unchecked(setting, reason string) {
	n.rep.Unchecked = append(n.rep.Unchecked, DoctorUnchecked{Node: n.node, Setting: setting, Reason: reason})
}

// refused reports whether err is Redis's answer rather than a lost
// connection: a refusal is reported as not checked, a lost connection
// ends the doctor.
func refused(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

func (n *doctorNode) run(ctx context.Context, c doctorConn) error {
	info, err := c.Info(ctx, "server", "replication", "persistence", "memory", "cluster").Result()
	switch {
	case err == nil:
		n.info = infoFields(info)
	case refused(err):
		n.infoErr = err.Error()
	default:
		return err
	}
	get := redis.NewMapStringStringCmd(ctx, "config", "get", "maxmemory-policy", "maxmemory", "appendonly",
		"appendfsync", "save", "min-replicas-to-write")
	_ = c.Process(ctx, get)
	m, err := get.Result()
	switch {
	case err == nil:
		n.config = m
	case refused(err):
		n.configErr = err.Error()
	default:
		return err
	}
	n.checkServer()
	n.checkMemory()
	n.checkPersistence()
	n.checkReplicas()
	if err := n.checkCluster(ctx, c); err != nil {
		return err
	}
	return n.checkACL(ctx, c)
}

// infoFields reads INFO's "name:value" lines.
func infoFields(info string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out
}

// setting answers a configuration parameter from CONFIG GET, or else from
// the INFO field that shows it, and whether either had it.
func (n *doctorNode) setting(name, infoField string) (string, bool) {
	if v, ok := n.config[name]; ok {
		return v, true
	}
	if infoField != "" {
		if v, ok := n.info[infoField]; ok {
			return v, true
		}
	}
	return "", false
}

func (n *doctorNode) checkServer() {
	v, ok := n.info["redis_version"]
	if !ok {
		reason := "INFO did not show it"
		if n.infoErr != "" {
			reason = "INFO: " + n.infoErr
		}
		n.unchecked("redis_version", reason)
		return
	}
	n.fact("redis_version", v)
	if mode := n.info["redis_mode"]; mode != "" {
		n.fact("redis_mode", mode)
	}
	if role := n.info["role"]; role != "" {
		n.fact("role", role)
	}
	var major, minor int
	parts := strings.SplitN(v, ".", 3)
	if len(parts) >= 2 {
		major, _ = strconv.Atoi(parts[0])
		minor, _ = strconv.Atoi(parts[1])
	}
	if major < minVersion[0] || (major == minVersion[0] && minor < minVersion[1]) {
		n.find(SeverityError, "redis_version", v, fmt.Sprintf("%d.%d or later", minVersion[0], minVersion[1]),
			"the store records its layout with SET NX GET and runs its scripts as Redis Functions, both from Redis 7.0")
	}
}

func (n *doctorNode) checkMemory() {
	policy, ok := n.setting("maxmemory-policy", "maxmemory_policy")
	if !ok {
		n.unchecked("maxmemory-policy", n.why(true))
	} else if policy != "noeviction" {
		n.find(SeverityError, "maxmemory-policy", policy, "noeviction",
			"an evicting policy can drop a run, a lease entry or a claim's memory when Redis is full, and break plait's guarantees")
	}
	mem, ok := n.setting("maxmemory", "maxmemory")
	if !ok {
		n.unchecked("maxmemory", n.why(true))
	} else if mem == "0" {
		n.find(SeverityNote, "maxmemory", "0", "a limit below the host's memory",
			"without a limit Redis grows until the host runs out of memory instead of refusing new runs with store.ErrStoreFull")
	}
}

func (n *doctorNode) checkPersistence() {
	aof, ok := n.setting("appendonly", "")
	if !ok {
		if v, in := n.info["aof_enabled"]; in {
			aof, ok = map[string]string{"0": "no", "1": "yes"}[v], true
		}
	}
	if !ok {
		n.unchecked("appendonly", n.why(true))
		return
	}
	if aof == "yes" {
		fsync, ok := n.setting("appendfsync", "")
		switch {
		case !ok:
			n.unchecked("appendfsync", n.why(false))
		case fsync != "always" && fsync != "everysec":
			n.find(SeverityWarning, "appendfsync", fsync, "everysec or always",
				"with appendfsync no the OS decides when the log reaches the disk, so a crash of the host can lose about 30 s of acknowledged writes")
		}
		return
	}
	save, ok := n.setting("save", "")
	switch {
	case !ok:
		n.unchecked("save", n.why(false))
	case strings.TrimSpace(save) == "":
		n.find(SeverityWarning, "appendonly", "no (and save \"\")", "yes",
			"persistence is off: a restart of Redis loses every run, lease and schedule")
	default:
		n.find(SeverityWarning, "appendonly", "no (snapshots only: save "+save+")", "yes",
			"with snapshots only, a crash loses every write since the last snapshot")
	}
}

func (n *doctorNode) checkReplicas() {
	replicas, _ := strconv.Atoi(n.info["connected_slaves"])
	if n.info["role"] != "master" || replicas == 0 {
		return
	}
	n.fact("connected_replicas", strconv.Itoa(replicas))
	min, ok := n.setting("min-replicas-to-write", "")
	if !ok {
		if _, good := n.info["min_slaves_good_slaves"]; good {
			return // INFO shows the field only when min-replicas-to-write is set
		}
		n.unchecked("min-replicas-to-write", n.why(false))
		return
	}
	if min == "0" {
		n.find(SeverityWarning, "min-replicas-to-write", "0", "1 or more",
			"the master acknowledges writes no replica has, so a failover to a lagging replica rolls them back")
	}
}

func (n *doctorNode) checkCluster(ctx context.Context, c doctorConn) error {
	if n.info["cluster_enabled"] != "1" {
		return nil
	}
	info, err := c.ClusterInfo(ctx).Result()
	switch {
	case err == nil:
	case refused(err):
		n.unchecked("cluster_state", "CLUSTER INFO: "+err.Error())
		return nil
	default:
		return err
	}
	f := infoFields(info)
	for _, k := range []string{"cluster_state", "cluster_size", "cluster_known_nodes"} {
		if v, ok := f[k]; ok {
			n.fact(k, v)
		}
	}
	if st := f["cluster_state"]; st != "ok" {
		n.find(SeverityError, "cluster_state", st, "ok", "the Cluster refuses commands on the slots it does not cover")
	}
	return nil
}
