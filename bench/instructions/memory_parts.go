package main

import (
	"context"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"
)

// memoryParts attributes Redis memory to the kinds of key a run is kept
// in: each key's MEMORY USAGE (every element counted), summed by its kind,
// the part of its name after the shard's "}:" up to the next ':' (r the
// run hashes, ia the index of all runs, xw the workflow streams, e the
// event stream, ...), per run. What no key's usage holds (the keyspace's
// own tables, the expiry table, the allocator's slack) is used_memory's
// growth less their sum, reported as "rest" by the caller. It walks the
// keyspace with SCAN: a measuring tool's reading, never plait's.
func memoryParts(ctx context.Context, c *redis.Client, runs int) (map[string]float64, error) {
	parts := map[string]float64{}
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, "", 1000).Result()
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			n, err := c.MemoryUsage(ctx, k, 0).Result()
			if err == redis.Nil {
				continue // expired between the SCAN and the read
			}
			if err != nil {
				return nil, err
			}
			parts[keyKind(k)] += float64(n) / float64(runs)
		}
		if next == 0 {
			return parts, nil
		}
		cursor = next
	}
}

// keyKind is the kind of key k: its name after "}:" up to the next ':',
// or the whole name of a key outside the shards.
func keyKind(k string) string {
	_, rest, ok := strings.Cut(k, "}:")
	if !ok {
		return k
	}
	kind, _, _ := strings.Cut(rest, ":")
	return kind
}

// formatParts writes parts, largest first, as "kind n B" joined by ", ",
// with rest, what used_memory grew by beyond them.
func formatParts(parts map[string]float64, total float64) string {
	kinds := make([]string, 0, len(parts))
	sum := 0.0
	for k, v := range parts {
		sum += v
		if v >= 0.5 {
			kinds = append(kinds, k)
		}
	}
	sort.Slice(kinds, func(i, j int) bool { return parts[kinds[i]] > parts[kinds[j]] })
	var b strings.Builder
	for _, k := range kinds {
		b.WriteString(k + " " + thousands(parts[k]) + ", ")
	}
	b.WriteString("rest " + thousands(total-sum))
	return b.String()
}
