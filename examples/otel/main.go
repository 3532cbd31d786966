// Command otel traces a plait workflow with OpenTelemetry: the submitter
// starts a span and carries its W3C trace context with the run
// (plait.WithTraceContext); a middleware around every handler extracts it
// (Task.Run().TraceContext()) and starts each task's span as its child. The
// spans of the submit and of every task share one trace, across processes
// too: the context travels in the run's metadata, through the store.
//
// Its metrics go to OpenTelemetry too, through the module
// github.com/plaitdag/plait/metrics/otel (plaitotel.New on a
// MeterProvider): attempts, runs submitted and ended, submit latency and
// the queue depth the schedule leader samples.
//
// It runs on the in-memory store and prints the spans it recorded and the
// metrics a reader collected:
//
//	cd examples/otel && go run .
//
// plait itself does not import OpenTelemetry; this module and plaitotel
// do.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/plaitdag/plait"
	plaitotel "github.com/plaitdag/plait/metrics/otel"
	"github.com/plaitdag/plait/store/memstore"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "otel:", err)
		os.Exit(1)
	}
}

// tracing is the middleware that runs each attempt in a span whose parent
// is the span the run was submitted under, taken from the run's trace
// context.
func tracing(tracer trace.Tracer, prop propagation.TextMapPropagator) plait.Middleware {
	return func(next plait.HandlerFunc) plait.HandlerFunc {
		return func(ctx context.Context, t *plait.Task) (any, error) {
			info := t.Run()
			tp, ts := info.TraceContext()
			ctx = prop.Extract(ctx, propagation.MapCarrier{"traceparent": tp, "tracestate": ts})
			ctx, span := tracer.Start(ctx, "task "+info.Task, trace.WithSpanKind(trace.SpanKindConsumer),
				trace.WithAttributes(
					attribute.String("plait.run_id", info.ID),
					attribute.String("plait.workflow", info.Workflow),
					attribute.String("plait.task", info.Task),
					attribute.Int("plait.attempt", info.Attempt.Attempt),
				))
			defer span.End()
			res, err := next(ctx, t)
			if err != nil {
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			}
			return res, err
		}
	}
}

func run(ctx context.Context, out io.Writer) error {
	recorder := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	defer func() { _ = provider.Shutdown(context.Background()) }()
	tracer := provider.Tracer("github.com/plaitdag/plait/examples/otel")
	prop := propagation.TraceContext{}

	// Metrics: a reader collects them on demand here; a service would
	// give the MeterProvider a periodic exporter instead.
	reader := sdkmetric.NewManualReader()
	meters := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = meters.Shutdown(context.Background()) }()
	metrics, err := plaitotel.New(meters)
	if err != nil {
		return err
	}
	defer func() { _ = metrics.Close() }()

	st, err := memstore.New()
	if err != nil {
		return err
	}
	s, err := plait.New(st,
		plait.WithMetrics(metrics),
		plait.WithMiddleware(tracing(tracer, prop)),
		plait.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	)
	if err != nil {
		return err
	}
	if err := s.Handle("step", func(ctx context.Context, t *plait.Task) (any, error) {
		// The handler's context carries its span: calls it makes that are
		// traced (HTTP clients, databases) become children of it.
		trace.SpanFromContext(ctx).AddEvent("working")
		return t.Name, nil
	}); err != nil {
		return err
	}

	// The submitter's side: a span, and its context injected into the run.
	sctx, span := tracer.Start(ctx, "submit order", trace.WithSpanKind(trace.SpanKindProducer))
	carrier := propagation.MapCarrier{}
	prop.Inject(sctx, carrier)
	wf := plait.NewWorkflow("order").
		Task("reserve", "step", nil).
		Task("charge", "step", nil, plait.After("reserve")).
		Task("ship", "step", nil, plait.After("charge"))
	runRec, err := s.Submit(sctx, wf, plait.ForTenant("acme"), plait.WithTraceContext(carrier.Get("traceparent"), carrier.Get("tracestate")))
	span.End()
	if err != nil {
		return err
	}

	// The worker's side, which could be another process on a shared store.
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(rctx) }()
	final, err := s.RunWait(ctx, runRec.ID)
	cancel()
	if rerr := <-done; err == nil {
		err = rerr
	}
	if err != nil {
		return err
	}

	spans := recorder.Ended()
	root := span.SpanContext()
	fmt.Fprintf(out, "run %s %s; trace %s\n", final.ID, final.Status, root.TraceID())
	same := 0
	for _, sp := range spans {
		parent := "none"
		if sp.Parent().IsValid() {
			parent = sp.Parent().SpanID().String()
		}
		fmt.Fprintf(out, "  %-14s span %s parent %s trace %s\n", sp.Name(), sp.SpanContext().SpanID(), parent, sp.SpanContext().TraceID())
		if sp.SpanContext().TraceID() == root.TraceID() {
			same++
		}
	}
	if same != len(spans) || len(spans) != 4 {
		return fmt.Errorf("want 4 spans in one trace, got %d of %d", same, len(spans))
	}
	fmt.Fprintln(out, "every task span is a child of the submit span, in its trace")
	return printMetrics(ctx, reader, out)
}

// printMetrics collects the plait counters once and prints each series.
func printMetrics(ctx context.Context, reader *sdkmetric.ManualReader, out io.Writer) error {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		return err
	}
	ended := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, p := range sum.DataPoints {
				fmt.Fprintf(out, "  %-22s %d", m.Name, p.Value)
				for _, kv := range p.Attributes.ToSlice() {
					fmt.Fprintf(out, " %s=%s", kv.Key, kv.Value.Emit())
				}
				fmt.Fprintln(out)
				ended = ended || m.Name == "plait.runs.ended"
			}
		}
	}
	if !ended {
		return errors.New("no plait.runs.ended series collected")
	}
	return nil
}
