package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/plaitdag/plait/internal/ids"
	"github.com/plaitdag/plait/store"
	"github.com/redis/go-redis/v9"
)

// The query side of store.QueryStore. Every run is in the query indexes of
// its shard (keys.go: ia, it:<status>, and the name indexes of its
// workflow, service, service and tenant, and tenant), zsets scored by
// creation (ms) with the run id as member, but the name indexes of format
// version 8, streams of the same order (lua/lib_names.lua), and a
// finished run in if:<status> scored by its end, kept by run_index
// (lua/lib_status.lua) inside the transitions (query_filter.go chooses the
// index of a filter).
// A query reads one page per shard with run_list.lua, all shards in one
// pipeline, merges them by (score, id) descending, then reads the page's
// runs in a second pipeline: two round trips a page whatever the shard
// count.

// queryBudget bounds the index entries run_list.lua reads per key and
// call, beyond the page itself: a check the index does not hold (a status
// on a service index, a second name, an error prefix) skips runs, and a
// call must stay short.
const queryBudget = store.QueryReadBudget

// letterOf maps a run status to its letter (runLetters).
func letterOf(st store.RunStatus) string {
	for _, l := range runLetters {
		if l.status == string(st) {
			return l.letter
		}
	}
	return ""
}

// position is an index entry: a run's score (creation or end, ms) and id. Entries are
// ordered newest first, then by id in descending byte order, as
// ZREVRANGEBYSCORE orders members of one score.
type position struct {
	score int64
	id    string
}

// newer reports whether a sorts before b in a listing.
func (a position) newer(b position) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.id > b.id
}

func comparePositions(a, b position) int {
	if a.newer(b) {
		return -1
	}
	if b.newer(a) {
		return 1
	}
	return 0
}

// cursor encoding: "r1.<score>.<id>".
func encodeCursor(p position) string { return "r1." + strconv.FormatInt(p.score, 10) + "." + p.id }

func decodeCursor(c string) (position, error) {
	bad := fmt.Errorf("redisstore: query cursor %s: %w", ids.Quote(c), store.ErrInvalidArgument)
	rest, ok := strings.CutPrefix(c, "r1.")
	if !ok {
		return position{}, bad
	}
	sc, id, ok := strings.Cut(rest, ".")
	if !ok || id == "" {
		return position{}, bad
	}
	n, err := strconv.ParseInt(sc, 10, 64)
	if err != nil {
		return position{}, bad
	}
	return position{n, id}, nil
}

// RunList lists runs newest first. See [store.QueryStore.RunList]. Two
// round trips: the index pages of every shard, then the page's runs.
func (s *Store) RunList(ctx context.Context, params *store.RunListParams) (*store.RunListResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	f := &params.Filter
	max, min := scoreRange(f)
	cid := ""
	if params.Cursor != "" {
		c, err := decodeCursor(params.Cursor)
		if err != nil {
			return nil, err
		}
		max, cid = strconv.FormatInt(c.score, 10), c.id
	}
	want := params.Limit + 1
	calls := make([]scriptCall, s.cfg.shards)
	for sh := range calls {
		src := s.querySource(sh, f)
		args := append([]any{s.keys.base(sh), max, cid, min, want, queryBudget + want, src.pick}, src.checks...)
		args = append(args, src.kinds)
		calls[sh] = scriptCall{keys: src.keys, args: args}
	}
	replies, err := s.pipeScripts(ctx, scriptRunList, calls)
	if err != nil {
		return nil, err
	}
	var found []position
	var frontier *position // the newest position a cut key stopped at
	for _, v := range replies {
		err := readIndexPages(v, func(entries []position, cut *position) {
			found = append(found, entries...)
			if cut != nil && (frontier == nil || cut.newer(*frontier)) {
				frontier = cut
			}
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(found, comparePositions)
	if frontier != nil {
		// A key cut short may hold entries older than its frontier that
		// sort before what other keys found: nothing past it is sure.
		keep := 0
		for keep < len(found) && !frontier.newer(found[keep]) {
			keep++
		}
		found = found[:keep]
	}
	out := &store.RunListResult{}
	page := found
	if len(page) > params.Limit {
		page = page[:params.Limit]
		out.NextCursor = encodeCursor(page[len(page)-1])
	} else if frontier != nil {
		out.NextCursor = encodeCursor(*frontier)
	}
	ids := make([]string, len(page))
	for i, p := range page {
		ids[i] = p.id
	}
	runs, err := s.getMany(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if r != nil {
			out.Runs = append(out.Runs, r)
		}
	}
	return out, nil
}

// readIndexPages reads the answer of run_list.lua for one shard: per key
// read, page is called with the entries it found and, when its read was
// cut before it found them all, the position of the last entry it read.
func readIndexPages(v []any, page func(entries []position, cut *position)) error {
	r := &reply{v: v}
	for r.i < len(r.v) && r.err == nil {
		cut, lastS, lastM, n := r.int(), r.str(), r.str(), int(r.int())
		entries := make([]position, 0, n)
		for j := 0; j < n && r.err == nil; j++ {
			m, sc := r.str(), r.str()
			score, err := strconv.ParseInt(sc, 10, 64)
			if err != nil {
				return fmt.Errorf("redisstore: index score %q: %w", sc, err)
			}
			entries = append(entries, position{score, m})
		}
		var last *position
		if cut == 1 && r.err == nil {
			score, err := strconv.ParseInt(lastS, 10, 64)
			if err != nil {
				return fmt.Errorf("redisstore: index score %q: %w", lastS, err)
			}
			last = &position{score, lastM}
		}
		if r.err == nil {
			page(entries, last)
		}
	}
	return r.err
}

// RunGetMany reads runs by id in one pipeline of HGETALL. See
// [store.QueryStore.RunGetMany].
func (s *Store) RunGetMany(ctx context.Context, params *store.RunGetManyParams) (*store.RunGetManyResult, error) {
	if len(params.IDs) > store.GetManyMax {
		return nil, fmt.Errorf("redisstore: %d ids, want at most %d: %w", len(params.IDs), store.GetManyMax, store.ErrInvalidArgument)
	}
	runs, err := s.getMany(ctx, params.IDs)
	if err != nil {
		return nil, err
	}
	return &store.RunGetManyResult{Runs: runs}, nil
}

// getMany reads runs in one pipeline; a missing run, or an id this store
// cannot have issued, is nil.
func (s *Store) getMany(ctx context.Context, ids []string) ([]*store.Run, error) {
	out := make([]*store.Run, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	pipe := s.client.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		if sh, ok := shardOf(id, s.cfg.shards); ok {
			cmds[i] = pipe.HGetAll(ctx, s.keys.run(sh, id))
		}
	}
	if pipe.Len() == 0 {
		return out, nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, mapErr(err)
	}
	for i, c := range cmds {
		if c == nil {
			continue
		}
		h := c.Val()
		if len(h) == 0 {
			continue
		}
		r, err := decodeRun(ids[i], h)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// RunDelete deletes a finished run with run_delete.lua. See
// [store.QueryStore.RunDelete].
func (s *Store) RunDelete(ctx context.Context, params *store.RunDeleteParams) error {
	shard, err := s.runShard(params.ID)
	if err != nil {
		return err
	}
	v, err := s.runScript(ctx, scriptRunDelete, []string{s.keys.run(shard, params.ID)}, s.stepArg(), s.keys.base(shard), params.ID)
	if err != nil {
		return err
	}
	r := &reply{v: v}
	code := r.int()
	if r.err != nil {
		return r.err
	}
	if err := codeErr(code); err != nil {
		return fmt.Errorf("redisstore: delete run %s: %w", params.ID, err)
	}
	return nil
}

// RunPrune removes the runs whose retention is over, shard after shard,
// until params.Limit runs are pruned. See [store.QueryStore.RunPrune]. One
// run_prune.lua call per shard visited.
func (s *Store) RunPrune(ctx context.Context, params *store.RunPruneParams) (*store.RunPruneResult, error) {
	if params.Limit < 1 {
		return nil, fmt.Errorf("redisstore: prune limit %d: %w", params.Limit, store.ErrInvalidArgument)
	}
	out := &store.RunPruneResult{}
	for _, sh := range s.shardOrder() {
		left := params.Limit - out.Pruned
		if left == 0 {
			out.More = true
			break
		}
		v, err := s.runScript(ctx, scriptRunPrune, []string{s.keys.expiryLists(sh)}, s.stepArg(), s.keys.base(sh), left)
		if err != nil {
			return out, err
		}
		r := &reply{v: v}
		n, more := r.int(), r.int()
		if r.err != nil {
			return out, r.err
		}
		out.Pruned += int(n)
		out.More = out.More || more == 1
	}
	return out, nil
}

// TaskList reads one run and keeps the tasks asked for. See
// [store.QueryStore.TaskList].
func (s *Store) TaskList(ctx context.Context, params *store.TaskListParams) (*store.TaskListResult, error) {
	run, err := s.RunGet(ctx, &store.RunGetParams{ID: params.RunID})
	if err != nil {
		return nil, err
	}
	tasks := run.Tasks
	if len(params.Statuses) > 0 {
		tasks = slices.DeleteFunc(tasks, func(t store.TaskInstance) bool { return !slices.Contains(params.Statuses, t.Status) })
	}
	return &store.TaskListResult{Tasks: tasks}, nil
}

// scriptCall is one call of a script in a pipeline.
type scriptCall struct {
	keys []string
	args []any
}

// pipeScripts sends one call of the read-only script sc per element of
// calls in one pipeline and returns their replies.
func (s *Store) pipeScripts(ctx context.Context, sc *script, calls []scriptCall) ([][]any, error) {
	cmds, execErr := s.pipeline(ctx, sc, calls, true)
	if execErr != nil {
		return nil, mapErr(execErr)
	}
	out := make([][]any, len(cmds))
	for i, c := range cmds {
		v, err := c.Slice()
		if err != nil {
			return nil, mapErr(err)
		}
		out[i] = v
	}
	return out, nil
}
