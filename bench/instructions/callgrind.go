package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// cronFunc is Redis's timer, serverCron: ten times a second by the clock,
// whatever the load, mostly refreshing the allocator's statistics (about
// 110k instructions a call on redis 7.0). Under callgrind a phase lasts
// about fifty times longer than it would natively, so its share would
// measure how slow the run was, not what the phase did; it is counted
// apart and left out of the figures.
const cronFunc = "serverCron"

// callgrind is a redis-server running under valgrind's callgrind tool with
// instrumentation off, switched on only while a phase runs.
type callgrind struct {
	*server
	control string // callgrind_control
	out     string // the dump file's base name; dump k is out.k
	dumps   int
	keep    string // when set, each phase's dump is copied here
}

// startCallgrind starts redis under callgrind in dir. Instrumentation starts
// off, so the server starts and the phases set up at valgrind's plain
// speed. Names are written in full in every dump (no compression), which
// keeps the dump reader simple.
func startCallgrind(redisServer, dir string) (*callgrind, error) {
	control, err := exec.LookPath("callgrind_control")
	if err != nil {
		return nil, fmt.Errorf("callgrind_control not found (install valgrind): %w", err)
	}
	valgrind, err := exec.LookPath("valgrind")
	if err != nil {
		return nil, fmt.Errorf("valgrind not found: %w", err)
	}
	out := filepath.Join(dir, "callgrind.out")
	argv := []string{valgrind, "--tool=callgrind", "--instr-atstart=no",
		"--callgrind-out-file=" + out, "--compress-strings=no", "--compress-pos=no",
		"--log-file=" + filepath.Join(dir, "valgrind.log"), redisServer}
	srv, err := startServer(argv, dir, 2*time.Minute)
	if err != nil {
		return nil, err
	}
	return &callgrind{server: srv, control: control, out: out}, nil
}

// do sends one callgrind_control command and waits for its answer: vgdb
// answers once the server has acted on it, so a phase started after
// "--instr=on" returns is counted from its first instruction.
func (c *callgrind) do(args ...string) error {
	args = append(args, strconv.Itoa(c.cmd.Process.Pid))
	out, err := exec.Command(c.control, args...).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("OK")) {
		return fmt.Errorf("callgrind_control %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// count is what one dump holds.
type count struct {
	ir   float64 // instructions outside cronFunc
	cron float64 // instructions inside cronFunc
}

// measure counts the server's instructions while fn runs: instrumentation
// on and the counters zeroed before, instrumentation off and a dump after.
// With keep set, the dump is kept there as name.callgrind, for
// callgrind_annotate.
func (c *callgrind) measure(name string, fn func() error) (count, error) {
	if err := c.do("--instr=on"); err != nil {
		return count{}, err
	}
	if err := c.do("--zero"); err != nil {
		return count{}, err
	}
	ferr := fn()
	if err := c.do("--instr=off"); err != nil {
		return count{}, err
	}
	if err := c.do("--dump"); err != nil {
		return count{}, err
	}
	c.dumps++
	file := c.out + "." + strconv.Itoa(c.dumps)
	if ferr != nil {
		_ = os.Remove(file)
		return count{}, ferr
	}
	n, err := readDump(file)
	if err != nil {
		return count{}, fmt.Errorf("%s: %w (dumps: %s)", file, err, strings.Join(c.dumpFiles(), " "))
	}
	if c.keep != "" {
		err = keepDump(file, filepath.Join(c.keep, name+".callgrind"), n.ir+n.cron)
	}
	if rerr := os.Remove(file); err == nil {
		err = rerr
	}
	return n, err
}

func (c *callgrind) dumpFiles() []string {
	m, _ := filepath.Glob(c.out + ".*")
	sort.Strings(m)
	return m
}

// keepDump copies a dump to dst with its "summary:" line set to its
// totals. Callgrind writes a wrong summary when instrumentation was
// switched on after the start (the totals line is right), and
// callgrind_annotate goes by the summary.
func keepDump(src, dst string, totals float64) error {
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(raw, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("summary:")) {
			line = []byte(fmt.Sprintf("summary: %.0f\n", totals))
		}
		out.Write(line)
	}
	return os.WriteFile(dst, out.Bytes(), 0o644)
}

// readDump reads a callgrind dump written without name compression: the
// "totals:" line, and the inclusive cost of every call to cronFunc (the
// cost line right after a "calls=" line whose "cfn=" is cronFunc). As a
// check on the reading, the self costs of all functions must add up to the
// totals.
func readDump(file string) (count, error) {
	f, err := os.Open(file)
	if err != nil {
		return count{}, err
	}
	defer f.Close()
	var (
		totals, self, cron float64
		haveTotals         bool
		cfn                string
		callCost           bool // the next cost line is a call's inclusive cost
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		c := line[0]
		switch {
		case c >= '0' && c <= '9' || c == '+' || c == '-' || c == '*':
			fields := strings.Fields(line)
			var ir float64
			if len(fields) >= 2 {
				if ir, err = strconv.ParseFloat(fields[1], 64); err != nil {
					return count{}, fmt.Errorf("cost line %q: %w", line, err)
				}
			}
			if callCost {
				if cfn == cronFunc || strings.HasPrefix(cfn, cronFunc+"'") {
					cron += ir
				}
				callCost = false
			} else {
				self += ir
			}
		case strings.HasPrefix(line, "cfn="):
			cfn = line[len("cfn="):]
		case strings.HasPrefix(line, "calls="):
			callCost = true
		case strings.HasPrefix(line, "totals:"):
			v, err := strconv.ParseFloat(strings.TrimSpace(line[len("totals:"):]), 64)
			if err != nil {
				return count{}, fmt.Errorf("totals line %q: %w", line, err)
			}
			totals, haveTotals = v, true
		}
	}
	if err := sc.Err(); err != nil {
		return count{}, err
	}
	if !haveTotals {
		return count{}, fmt.Errorf("no totals line")
	}
	if self != totals {
		return count{}, fmt.Errorf("self costs add up to %.0f, totals say %.0f", self, totals)
	}
	if cron > totals {
		return count{}, fmt.Errorf("%s counted %.0f of %.0f", cronFunc, cron, totals)
	}
	return count{ir: totals - cron, cron: cron}, nil
}
