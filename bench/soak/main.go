// Command soak runs plait at a steady mixed load for a long while, on the
// memory store and on Redis behind Sentinel, crashing a worker every
// minute and, on Redis, failing the primary over halfway, then stops the
// workers gracefully with work in flight and lets a fresh worker finish
// it. Every 30 s it samples memory, key count and the latency of the runs
// that ended, and at the end it prints one markdown table per store and a
// summary: every run must have completed once. See README.md, "Soak".
//
//	bench/soak.sh -for 30m            # both stores, 30 minutes each
//	bench/soak.sh -for 2m -store redis
//
// On Redis the workers are processes of this binary (-worker), killed
// with SIGKILL and started again; on the memory store, which lives in one
// process, a worker is a Scheduler whose store is cut off (every call
// fails, as for a process that died) before it is dropped and replaced.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// retention is how long finished runs are kept: short, so that the key
// count and memory settle within the soak.
const retention = time.Minute

type options struct {
	dur, killEvery, sample time.Duration
	rate                   float64
	workers                int
	stores                 []string
	out                    string
}

func main() {
	var o options
	var stores, worker, sentinels string
	flag.DurationVar(&o.dur, "for", 30*time.Minute, "how long each store runs under load")
	flag.StringVar(&stores, "store", "memory,redis", "the stores to soak: memory, redis or both (comma-separated)")
	flag.Float64Var(&o.rate, "rate", 8, "runs submitted per second (a mix of 1, 3, 6 and 1-task runs)")
	flag.IntVar(&o.workers, "workers", 3, "worker processes (schedulers on the memory store)")
	flag.DurationVar(&o.killEvery, "kill-every", time.Minute, "how often a worker is killed and started again")
	flag.DurationVar(&o.sample, "sample", 30*time.Second, "how often memory, keys and latency are sampled")
	flag.StringVar(&o.out, "out", "", "also write the tables to this file")
	flag.StringVar(&worker, "worker", "", "run as worker process ID (started by the soak itself)")
	flag.StringVar(&sentinels, "sentinels", "", "the sentinels a worker process reaches Redis through")
	flag.Parse()
	if worker != "" {
		os.Exit(workerMain(worker, sentinels))
	}
	o.stores = strings.Split(stores, ",")
	var w io.Writer = os.Stdout
	if o.out != "" {
		f, err := os.Create(o.out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(1)
		}
		defer f.Close()
		w = io.MultiWriter(os.Stdout, f)
	}
	fmt.Fprintf(w, "# plait soak, %s\n\n%s per store at %.0f runs/s, %d workers, one killed every %s; retention %s.\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), o.dur, o.rate, o.workers, o.killEvery, retention)
	failed := false
	for _, st := range o.stores {
		var ok bool
		var err error
		switch st {
		case "memory":
			ok, err = soakMemory(o, w)
		case "redis":
			ok, err = soakRedis(o, w)
		default:
			err = fmt.Errorf("unknown store %q: want memory or redis", st)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(1)
		}
		failed = failed || !ok
	}
	if failed {
		os.Exit(3)
	}
}
