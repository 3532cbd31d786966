package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/plaitdag/plait/internal/faultproxy"
)

// SentinelMaster is the name the sentinels of StartSentinel monitor.
const SentinelMaster = "plait"

// Sentinel is a primary, one replica and sentinels watching them, started
// for tests. The replica may replicate through a fault proxy
// (ReplicaLink), so a test can hold replication back while the replica
// stays healthy in the sentinels' eyes (it answers their pings), which is
// how a replica lags in production.
type Sentinel struct {
	// Addrs are the sentinels' addresses, for a failover client.
	Addrs []string
	// Primary and Replica are the servers as started; after a failover
	// Replica is the master.
	Primary, Replica *Server
	// ReplicaLink carries the replica's replication link to the primary;
	// nil when the replica replicates straight from it.
	ReplicaLink *faultproxy.Proxy
	sentinels   []*Server
}

// StartSentinel starts a primary and a replica (each given extra), and n
// sentinels monitoring the primary with a quorum of a majority of them,
// and waits until the replica is in sync and every sentinel knows it.
// The sentinels declare a server down after a second without an answer.
// With lagging, the replica replicates through ReplicaLink. The
// sentinels' failover timeout is a minute: a sentinel points a replica
// replicating from another address than the master's (the proxy) at the
// master itself once that long has passed since it found it, so a test
// must be done with the proxy, failover included, before.
func StartSentinel(n int, lagging bool, extra ...string) (*Sentinel, error) {
	if n < 1 {
		return nil, errors.New("redistest: Sentinel needs at least one sentinel")
	}
	s := &Sentinel{}
	var err error
	if s.Primary, err = Start(extra...); err != nil {
		return nil, err
	}
	link := s.Primary.Addr
	if lagging {
		if s.ReplicaLink, err = faultproxy.Start(s.Primary.Addr); err != nil {
			s.Close()
			return nil, err
		}
		link = s.ReplicaLink.Addr()
	}
	host, port, _ := strings.Cut(link, ":")
	if s.Replica, err = Start(append([]string{"--replicaof", host, port}, extra...)...); err != nil {
		s.Close()
		return nil, err
	}
	phost, pport, _ := strings.Cut(s.Primary.Addr, ":")
	conf := fmt.Sprintf("sentinel monitor %s %s %s %d\n"+
		"sentinel down-after-milliseconds %[1]s 1000\n"+
		"sentinel failover-timeout %[1]s 60000\n", SentinelMaster, phost, pport, n/2+1)
	for i := 0; i < n; i++ {
		dir, err := os.MkdirTemp("", "plait-sentinel-")
		if err != nil {
			s.Close()
			return nil, err
		}
		file := filepath.Join(dir, "sentinel.conf")
		if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
			os.RemoveAll(dir)
			s.Close()
			return nil, err
		}
		srv, err := launch(dir, func(port int) []string {
			return []string{file, "--sentinel", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
				"--dir", dir, "--logfile", filepath.Join(dir, "sentinel.log")}
		})
		if err != nil {
			s.Close()
			return nil, err
		}
		s.sentinels = append(s.sentinels, srv)
		s.Addrs = append(s.Addrs, srv.Addr)
	}
	if err := s.waitReady(30 * time.Second); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// waitReady polls until the replica's link is up and every sentinel lists
// the replica as a healthy one; these are outside processes, so there is
// no event to wait on.
func (s *Sentinel) waitReady(limit time.Duration) error {
	ctx := context.Background()
	deadline := time.Now().Add(limit)
	for {
		ok := s.replicaInSync(ctx)
		for _, srv := range s.sentinels {
			if !ok {
				break
			}
			ok = s.knowsReplica(ctx, srv)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("redistest: the replica did not sync or the sentinels did not find it")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Sentinel) replicaInSync(ctx context.Context) bool {
	c := s.Replica.Client()
	defer c.Close()
	info, err := c.Info(ctx, "replication").Result()
	return err == nil && strings.Contains(info, "master_link_status:up")
}

func (s *Sentinel) knowsReplica(ctx context.Context, srv *Server) bool {
	c := redis.NewSentinelClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	replicas, err := c.Replicas(ctx, SentinelMaster).Result()
	if err != nil {
		return false
	}
	for _, r := range replicas {
		if net := r["ip"] + ":" + r["port"]; net == s.Replica.Addr && r["flags"] == "slave" {
			return true
		}
	}
	return false
}

// Failover asks a sentinel for a failover (SENTINEL FAILOVER, which needs
// no agreement of the others) and waits until every sentinel names the
// replica as the master and the replica has taken the role.
func (s *Sentinel) Failover(ctx context.Context) error {
	c := redis.NewSentinelClient(&redis.Options{Addr: s.sentinels[0].Addr})
	err := c.Failover(ctx, SentinelMaster).Err()
	c.Close()
	if err != nil {
		return fmt.Errorf("redistest: sentinel failover: %w", err)
	}
	return s.WaitMaster(ctx, s.Replica.Addr, 30*time.Second)
}

// WaitMaster polls until every sentinel names addr as the master and the
// server at addr reports the master role.
func (s *Sentinel) WaitMaster(ctx context.Context, addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ok := true
		for _, srv := range s.sentinels {
			c := redis.NewSentinelClient(&redis.Options{Addr: srv.Addr})
			got, err := c.GetMasterAddrByName(ctx, SentinelMaster).Result()
			c.Close()
			if err != nil || len(got) != 2 || got[0]+":"+got[1] != addr {
				ok = false
				break
			}
		}
		if ok {
			c := redis.NewClient(&redis.Options{Addr: addr})
			role, err := c.Do(ctx, "ROLE").Slice()
			c.Close()
			ok = err == nil && len(role) > 0 && role[0] == "master"
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: %s did not become the master", addr)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Close stops the sentinels, the servers and the proxy.
func (s *Sentinel) Close() {
	for _, srv := range s.sentinels {
		_ = srv.Close()
	}
	if s.ReplicaLink != nil {
		s.ReplicaLink.Resume()
		_ = s.ReplicaLink.Close()
	}
	for _, srv := range []*Server{s.Replica, s.Primary} {
		if srv != nil {
			_ = srv.Close()
		}
	}
}
