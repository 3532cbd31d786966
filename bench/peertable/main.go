// Command peertable prints the one table of the peer comparison: plait
// beside asynq, BullMQ and River on the targets of the performance round,
// from the figures peers.sh collected in one directory (plait-N.json from
// the bench command, which measures asynq too; bullmq-N.json; river-N.json;
// memstore-N.txt, the output of the in-memory store's benchmark). Every
// figure is the median over all rounds; a peer measured in several
// variants (BullMQ's two chain hand-offs, River's two) counts with its
// best.
//
//	go run ./peertable results/peers-<date>-<rev>
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// figures holds every value found per library and metric key.
type figures map[string]map[string][]float64

func (f figures) add(lib, key string, vs ...float64) {
	if f[lib] == nil {
		f[lib] = map[string][]float64{}
	}
	f[lib][key] = append(f[lib][key], vs...)
}

// median of lib's values for the first of keys that has any, or of the
// best of them when best is set (max for higher-is-better, min otherwise).
func (f figures) get(lib string, higher bool, keys ...string) (float64, bool) {
	found, out := false, 0.0
	for _, k := range keys {
		vs := f[lib][k]
		if len(vs) == 0 {
			continue
		}
		m := median(vs)
		if !found || (higher && m > out) || (!higher && m < out) {
			out, found = m, true
		}
	}
	return out, found
}

func median(vs []float64) float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// row is one target: where each library's figure is, which way is better,
// and the ratio plait must reach against the best peer (or against one
// named peer).
type row struct {
	name     string
	higher   bool
	plait    []string
	asynq    []string
	bullmq   []string
	river    []string
	against  string  // "" best peer, else the one peer the target names
	target   float64 // plait/peer ratio to reach: at least (higher) or at most
	absolute float64 // a target in the figure's own unit instead (memstore)
}

var rows = []row{
	{name: "process no-op tasks/s, c=10", higher: true, plait: []string{"plait/tp.proc.c10"}, asynq: []string{"asynq/tp.proc.c10"}, bullmq: []string{"tp.proc.c10"}, river: []string{"river-1ms/tp.proc.c10"}, target: 2},
	{name: "process no-op tasks/s, c=50", higher: true, plait: []string{"plait/tp.proc.c50"}, asynq: []string{"asynq/tp.proc.c50"}, bullmq: []string{"tp.proc.c50"}, river: []string{"river-1ms/tp.proc.c50"}, target: 2},
	{name: "chain hop p50, ms", plait: []string{"plait/chain.p50"}, asynq: []string{"asynq-tc-1ms/chain.p50"}, bullmq: []string{"chain.add.p50", "chain.flow.p50"}, river: []string{"river-1ms/chain.insert.p50", "river-1ms/chain.tx.p50"}, target: 0.5},
	{name: "chain hop p99, ms", plait: []string{"plait/chain.p99"}, asynq: []string{"asynq-tc-1ms/chain.p99"}, bullmq: []string{"chain.add.p99", "chain.flow.p99"}, river: []string{"river-1ms/chain.insert.p99", "river-1ms/chain.tx.p99"}, target: 0.5},
	{name: "fan-out 5,000 + join, total s", plait: []string{"plait/fan.total"}, asynq: []string{"asynq-tc-1ms/fan.total"}, bullmq: []string{"fan.total"}, river: []string{"river-1ms/fan.plain.total", "river-1ms/fan.tx.total"}, target: 0.4},
	{name: "join pickup of the 5,000-wide fan-in, ms", plait: []string{"plait/fan.join"}, asynq: []string{"asynq-tc-1ms/fan.join"}, bullmq: []string{"fan.join"}, river: []string{"river-1ms/fan.plain.join", "river-1ms/fan.tx.join"}, target: 1},
	{name: "Submit of a one-task workflow, 1 goroutine, tasks/s", higher: true, plait: []string{"plait/tp.enq"}, asynq: []string{"asynq/tp.enq"}, bullmq: []string{"tp.enq"}, river: []string{"river-1ms/tp.enq"}, against: "asynq", target: 1},
	{name: "bulk submit tasks/s (SubmitMany; River's COPY-based InsertManyFast)", higher: true, plait: []string{"plait/tp.enqmany"}, bullmq: []string{"tp.enqmany"}, river: []string{"river-1ms/tp.enqfast"}, against: "River", target: 1},
	{name: "Redis bytes per pending task", plait: []string{"plait/mem.pending"}, asynq: []string{"asynq/mem.pending"}, bullmq: []string{"mem.pending"}, against: "asynq", target: 0.5},
	{name: "Redis bytes per finished task", plait: []string{"plait/mem.done"}, asynq: []string{"asynq/mem.done"}, bullmq: []string{"mem.done"}, against: "asynq", target: 0.4},
	{name: "Redis CPU µs per processed task, c=10", plait: []string{"plait/rcpu.proc.c10"}, asynq: []string{"asynq/rcpu.proc.c10"}, against: "asynq"},
	{name: "in-memory store, no-op tasks/s, c=10", higher: true, plait: []string{"memstore/tp.proc.c10"}, absolute: 400000},
}

var benchLine = regexp.MustCompile(`IndependentTasks/memstore/c=10\S*\s.*?([0-9.]+) tasks/s`)

func load(dir string) (figures, int, error) {
	f := figures{}
	rounds := map[string]bool{}
	paths, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		return nil, 0, err
	}
	for _, p := range paths {
		base := filepath.Base(p)
		lib, _, ok := strings.Cut(base, "-")
		if !ok {
			continue
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case lib == "memstore" && strings.HasSuffix(base, ".txt"):
			for _, m := range benchLine.FindAllStringSubmatch(string(raw), -1) {
				v, _ := strconv.ParseFloat(m[1], 64)
				f.add("plait", "memstore/tp.proc.c10", v)
			}
		case strings.HasSuffix(base, ".json"):
			var j struct {
				Values map[string][]float64 `json:"values"`
			}
			if err := json.Unmarshal(raw, &j); err != nil {
				return nil, 0, fmt.Errorf("%s: %w", p, err)
			}
			for k, vs := range j.Values {
				switch lib {
				case "plait":
					// the bench measures asynq beside plait
					if strings.HasPrefix(k, "asynq") {
						f.add("asynq", k, vs...)
					} else {
						f.add("plait", k, vs...)
					}
				default:
					f.add(lib, k, vs...)
				}
			}
			rounds[strings.TrimSuffix(base, ".json")] = true
		}
	}
	return f, len(rounds), nil
}

func num(v float64) string {
	switch {
	case v >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: peertable <results directory>")
		os.Exit(2)
	}
	f, _, err := load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	peers := []struct{ name, lib string }{{"asynq", "asynq"}, {"BullMQ", "bullmq"}, {"River", "river"}}
	fmt.Println("| target | plait | asynq | BullMQ | River | compared with | plait / it | target | met |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		pv, ok := f.get("plait", r.higher, r.plait...)
		cells := []string{r.name, "—"}
		if ok {
			cells[1] = num(pv)
		}
		bestName, bestV, haveBest := "", 0.0, false
		for i, keys := range [][]string{r.asynq, r.bullmq, r.river} {
			v, found := f.get(peers[i].lib, r.higher, keys...)
			if !found {
				cells = append(cells, "—")
				continue
			}
			cells = append(cells, num(v))
			if r.against != "" && r.against != peers[i].name {
				continue
			}
			if !haveBest || (r.higher && v > bestV) || (!r.higher && v < bestV) {
				bestName, bestV, haveBest = peers[i].name, v, true
			}
		}
		switch {
		case r.absolute > 0:
			met := ok && pv >= r.absolute
			cells = append(cells, "—", "—", "≥ "+num(r.absolute)+" tasks/s", yes(met))
		case !ok || !haveBest:
			cells = append(cells, bestName, "—", target(r), "—")
		default:
			ratio := pv / bestV
			met := r.target == 0 || (r.higher && ratio >= r.target) || (!r.higher && ratio <= r.target)
			if r.target == 0 {
				cells = append(cells, bestName, num(ratio), "reported", "—")
			} else {
				cells = append(cells, bestName, num(ratio), target(r), yes(met))
			}
		}
		fmt.Println("| " + strings.Join(cells, " | ") + " |")
	}
}

func target(r row) string {
	if r.target == 0 {
		return "reported"
	}
	if r.higher {
		return "≥ " + num(r.target) + "×"
	}
	return "≤ " + num(r.target) + "×"
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}
