// Command pipeline loads a workflow file of three commands and one HTTP
// call (pipeline.yaml) and runs it on the in-memory store: the commands run
// with cmdtask, the call with httptask against a test server on loopback.
// It prints each task's state and result.
//
//	go run ./examples/pipeline
package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/cmdtask"
	"github.com/plaitdag/plait/httptask"
	"github.com/plaitdag/plait/store/memstore"
	"github.com/plaitdag/plait/workflowfile"
)

//go:embed pipeline.yaml
var pipelineFile []byte

// reportsHost is the host the file's HTTP call names; the example routes
// it to the loopback test server.
const reportsHost = "reports.example.test"

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	wf, err := workflowfile.Parse("pipeline.yaml", pipelineFile)
	if err != nil {
		return err
	}

	// The reports service: it stores a report and answers its size.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"stored":%d,"key":%q}`, len(body), r.Header.Get("Idempotency-Key"))
	}))
	defer srv.Close()
	toServer := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	defer toServer.CloseIdleConnections()

	st, err := memstore.New()
	if err != nil {
		return err
	}
	s, err := plait.New(st,
		plait.WithConcurrency(4),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	)
	if err != nil {
		return err
	}
	// The host decides what a file may do: these programs, this host.
	commands, err := cmdtask.New(cmdtask.Allow("printf", "tr", "wc"))
	if err != nil {
		return err
	}
	calls, err := httptask.New(httptask.AllowHosts(reportsHost), httptask.WithClient(&http.Client{Transport: toServer}))
	if err != nil {
		return err
	}
	if err := s.Handle(cmdtask.HandlerName, commands); err != nil {
		return err
	}
	if err := s.Handle(httptask.HandlerName, calls); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	run, err := s.Submit(ctx, wf)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	final, err := s.RunWait(ctx, run.ID)
	if err != nil {
		return err
	}
	cancel()
	if err := <-done; err != nil {
		return err
	}

	spec, err := wf.Spec(nil, plait.Limits{})
	if err != nil {
		return err
	}
	for _, t := range spec.Tasks {
		ti := final.Task(t.Name)
		shown := strings.TrimSpace(string(ti.Result))
		if ti.Error != "" {
			shown = "error: " + ti.Error
		}
		fmt.Fprintf(out, "%-9s %-10s %s\n", t.Name, ti.Status, shown)
	}
	fmt.Fprintf(out, "run %s %s\n", final.ID, final.Status)
	if final.Status != plait.RunCompleted {
		return fmt.Errorf("run ended %s", final.Status)
	}
	return nil
}
