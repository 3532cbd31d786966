package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/plaitdag/plait/inspector"
)

func serveCommands() []command {
	return []command{
		{path: "serve", short: "serve the web view (on 127.0.0.1:8080 by default) until interrupted", flags: serve},
	}
}

func serve(fs *flag.FlagSet) func(*env, []string) error {
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on; loopback unless you put it behind your own proxy and authentication")
	write := fs.Bool("write", false, "allow the view's actions (it is read-only by default)")
	actions := fs.String("actions", "", "with -write, the actions allowed, comma-separated (default all: "+strings.Join(inspector.Actions(), ",")+")")
	return func(e *env, args []string) error {
		if err := wantArgs(args, 0, "no argument"); err != nil {
			return err
		}
		host, _, err := net.SplitHostPort(*addr)
		if err != nil {
			return usagef("-addr %q: %v", *addr, err)
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			fmt.Fprintf(e.stderr, "plait serve: warning: %s is not loopback; the view has no authentication of its own\n", host)
		}
		if *actions != "" && !*write {
			return usagef("-actions needs -write")
		}
		s, err := e.scheduler()
		if err != nil {
			return err
		}
		opts := []inspector.Option{inspector.WithReadOnly(!*write),
			inspector.WithLogger(slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))}
		if *actions != "" {
			opts = append(opts, inspector.WithActions(splitList(*actions)...))
		}
		view, err := inspector.New(s, opts...)
		if errors.Is(err, inspector.ErrInvalidOption) {
			return usagef("%v", err)
		}
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			return err
		}
		// Requests take their context from e.ctx, so the view's event
		// streams end when the command is interrupted.
		srv := &http.Server{Handler: view, ReadHeaderTimeout: 5 * time.Second,
			BaseContext: func(net.Listener) context.Context { return e.ctx }}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		mode := "read-only"
		if *write {
			mode = "actions allowed"
		}
		fmt.Fprintf(e.stdout, "plait view on http://%s/ (%s)\n", ln.Addr(), mode)
		select {
		case err := <-served:
			return err
		case <-e.ctx.Done():
		}
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		io.WriteString(e.stdout, "stopped\n")
		return nil
	}
}
