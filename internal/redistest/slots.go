package redistest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// SlotOf answers the hash slot of key, as the cluster computes it.
func (c *Cluster) SlotOf(ctx context.Context, key string) (int, error) {
	cl := c.nodes[0].Client()
	defer cl.Close()
	n, err := cl.ClusterKeySlot(ctx, key).Result()
	return int(n), err
}

// SlotOwner answers the index in Addrs of the node serving slot, as the
// first node sees the cluster.
func (c *Cluster) SlotOwner(ctx context.Context, slot int) (int, error) {
	cl := c.nodes[0].Client()
	defer cl.Close()
	ranges, err := cl.ClusterSlots(ctx).Result()
	if err != nil {
		return 0, err
	}
	for _, r := range ranges {
		if slot < int(r.Start) || slot > int(r.End) || len(r.Nodes) == 0 {
			continue
		}
		for i, a := range c.Addrs {
			if a == r.Nodes[0].Addr {
				return i, nil
			}
		}
		return 0, fmt.Errorf("redistest: slot %d is served by an unknown node %s", slot, r.Nodes[0].Addr)
	}
	return 0, fmt.Errorf("redistest: slot %d is not served", slot)
}

// SlotMove is a slot being moved between two nodes, step by step, as
// redis-cli --cluster reshard moves it: the target IMPORTING, the source
// MIGRATING, MIGRATE of the keys, SETSLOT NODE everywhere.
type SlotMove struct {
	c              *Cluster
	slot, from, to int
	ids            []string
	src            *redis.Client
}

// SlotMoveBegin opens the move of slot to node to: the target IMPORTING,
// then the source MIGRATING. Keys move with Keys or Next; End closes it.
func (c *Cluster) SlotMoveBegin(ctx context.Context, slot, to int) (*SlotMove, error) {
	from, err := c.SlotOwner(ctx, slot)
	if err != nil {
		return nil, err
	}
	if from == to {
		return nil, errors.New("redistest: slot is already on the target node")
	}
	m := &SlotMove{c: c, slot: slot, from: from, to: to, ids: make([]string, len(c.nodes))}
	for i, srv := range c.nodes {
		cl := srv.Client()
		m.ids[i], err = cl.Do(ctx, "CLUSTER", "MYID").Text()
		cl.Close()
		if err != nil {
			return nil, err
		}
	}
	if err := c.nodeDo(ctx, to, "CLUSTER", "SETSLOT", slot, "IMPORTING", m.ids[from]); err != nil {
		return nil, fmt.Errorf("redistest: setslot importing: %w", err)
	}
	m.src = c.nodes[from].Client()
	if err := m.src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", m.ids[to]).Err(); err != nil {
		m.close()
		return nil, fmt.Errorf("redistest: setslot migrating: %w", err)
	}
	return m, nil
}

// Keys moves the keys named (each must be in the slot) to the target;
// a key the source does not hold is skipped.
func (m *SlotMove) Keys(ctx context.Context, keys ...string) error {
	host, port, _ := strings.Cut(m.c.Addrs[m.to], ":")
	args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
	for _, k := range keys {
		args = append(args, k)
	}
	if err := m.src.Do(ctx, args...).Err(); err != nil {
		return fmt.Errorf("redistest: migrate: %w", err)
	}
	return nil
}

// KeysLeft lists up to n of the slot's keys still on the source.
func (m *SlotMove) KeysLeft(ctx context.Context, n int) ([]string, error) {
	return m.src.ClusterGetKeysInSlot(ctx, m.slot, n).Result()
}

// Next moves up to batch of the keys still on the source and answers how
// many it moved: 0 when none is left.
func (m *SlotMove) Next(ctx context.Context, batch int) (int, error) {
	keys, err := m.KeysLeft(ctx, batch)
	if err != nil || len(keys) == 0 {
		return 0, err
	}
	return len(keys), m.Keys(ctx, keys...)
}

// End gives the slot to the target: SETSLOT NODE on the target first, so
// that it owns the slot before the source stops redirecting to it
// (redis-cli's order), then the source and every other node.
func (m *SlotMove) End(ctx context.Context) error {
	defer m.close()
	order := []int{m.to, m.from}
	for i := range m.c.nodes {
		if i != m.to && i != m.from {
			order = append(order, i)
		}
	}
	for _, i := range order {
		if err := m.c.nodeDo(ctx, i, "CLUSTER", "SETSLOT", m.slot, "NODE", m.ids[m.to]); err != nil {
			return fmt.Errorf("redistest: setslot node: %w", err)
		}
	}
	return nil
}

func (m *SlotMove) close() {
	if m.src != nil {
		_ = m.src.Close()
		m.src = nil
	}
}

func (c *Cluster) nodeDo(ctx context.Context, i int, args ...any) error {
	cl := c.nodes[i].Client()
	defer cl.Close()
	return cl.Do(ctx, args...).Err()
}
