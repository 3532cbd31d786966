package redistest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// Cluster is a Redis Cluster of masters started for tests.
type Cluster struct {
	Addrs []string
	nodes []*Server
}

// StartCluster starts n cluster-enabled redis-servers, splits the hash slots
// evenly between them, joins them and waits until the cluster is ok.
func StartCluster(n int) (*Cluster, error) {
	if n < 1 {
		return nil, errors.New("redistest: a cluster needs at least one node")
	}
	c := &Cluster{}
	for i := 0; i < n; i++ {
		srv, err := Start("--cluster-enabled", "yes", "--cluster-config-file", "nodes-"+strconv.Itoa(i)+".conf",
			"--cluster-node-timeout", "2000")
		if err != nil {
			c.Close()
			return nil, err
		}
		c.nodes = append(c.nodes, srv)
		c.Addrs = append(c.Addrs, srv.Addr)
	}
	ctx := context.Background()
	per := clusterSlots / n
	for i, srv := range c.nodes {
		first, last := i*per, (i+1)*per-1
		if i == n-1 {
			last = clusterSlots - 1
		}
		cl := srv.Client()
		err := cl.ClusterAddSlotsRange(ctx, first, last).Err()
		if err == nil && i > 0 {
			host, port, _ := strings.Cut(c.nodes[0].Addr, ":")
			err = cl.ClusterMeet(ctx, host, port).Err()
		}
		cl.Close()
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("redistest: cluster setup: %w", err)
		}
	}
	if err := c.waitOK(30 * time.Second); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// waitOK polls every node until all report cluster_state:ok and know every
// other node; the nodes gossip on their own, so there is no event to wait on.
func (c *Cluster) waitOK(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ok := true
		for _, srv := range c.nodes {
			cl := srv.Client()
			info, err := cl.ClusterInfo(context.Background()).Result()
			cl.Close()
			if err != nil || !strings.Contains(info, "cluster_state:ok") ||
				!strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(len(c.nodes))) {
				ok = false
				break
			}
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("redistest: cluster did not become ok")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Client returns a cluster client; the caller closes it.
func (c *Cluster) Client() *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
}

// Close stops every node.
func (c *Cluster) Close() {
	for _, srv := range c.nodes {
		_ = srv.Close()
	}
}
