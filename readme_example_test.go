package plait_test

// readme:begin
import (
	"context"
	"fmt"
	"time"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/store/memstore"
)

func dailyReport(ctx context.Context) error {
	store, err := memstore.New()
	if err != nil {
		return err
	}
	s, err := plait.New(store, plait.WithConcurrency(16))
	if err != nil {
		return err
	}
	err = s.Handle("extract", plait.Typed(func(ctx context.Context, t *plait.Task, url string) ([]Row, error) {
		return fetchRows(ctx, url)
	}))
	if err != nil {
		return err
	}
	err = s.Handle("load", func(ctx context.Context, t *plait.Task) (any, error) {
		rows, err := plait.ParentValue[[]Row](t, "extract")
		if err != nil {
			return nil, err
		}
		return len(rows), insert(ctx, rows)
	})
	if err != nil {
		return err
	}
	wf := plait.NewWorkflow("daily-report").
		Task("extract", "extract", "https://example.test/export").
		Task("load", "load", nil, plait.After("extract"), plait.Retry(3), plait.Timeout(time.Minute))
	run, err := s.Submit(ctx, wf) // validated before anything is written
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()                         // Run returns once ctx is done
	go s.Run(ctx)                        // workers, heartbeats, recovery: one call
	final, err := s.RunWait(ctx, run.ID) // every task's status and result
	if err != nil {
		return err
	}
	n, err := plait.ResultValue[int](final, "load", nil)
	if err != nil {
		return err
	}
	fmt.Printf("run %s: loaded %d rows\n", final.Status, n)
	return nil
}

// readme:end

// Row, fetchRows and insert stand in for the caller's own code in the
// README's example.
type Row struct {
	ID    int
	Total float64
}

func fetchRows(ctx context.Context, url string) ([]Row, error) {
	return []Row{{ID: 1, Total: 9.5}, {ID: 2, Total: 20}}, nil
}

func insert(ctx context.Context, rows []Row) error { return nil }

// The README's usage example, run: it registers two handlers, submits a
// two-task workflow, runs it on the in-memory store and reads a result.
func Example_readme() {
	if err := dailyReport(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output: run completed: loaded 2 rows
}
