package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/plaitdag/plait"
)

// listed is the scaffolding of a command that reads and prints: it takes
// no argument, runs its flag checks in order before the store is opened
// (a usage error needs no store), opens the scheduler and hands it to
// show.
func listed(show func(*env, *plait.Scheduler) error, checks ...func() error) func(*env, []string) error {
	return func(e *env, args []string) error {
		if err := wantArgs(args, 0, "no argument"); err != nil {
			return err
		}
		for _, check := range checks {
			if err := check(); err != nil {
				return err
			}
		}
		s, err := e.scheduler()
		if err != nil {
			return err
		}
		return show(e, s)
	}
}

// paging is the -limit and -cursor of a paged list.
type paging struct {
	limit  int
	cursor string
	most   int
}

// pagingFlags declares -limit, with a default and a ceiling, and -cursor.
func pagingFlags(fs *flag.FlagSet, def, most int) *paging {
	p := &paging{most: most}
	fs.IntVar(&p.limit, "limit", def, fmt.Sprintf("most items to list (1..%d)", most))
	fs.StringVar(&p.cursor, "cursor", "", "the nextCursor of the previous page")
	return p
}

// check refuses a -limit out of range.
func (p *paging) check() error {
	if p.limit < 1 || p.limit > p.most {
		return usagef("-limit %d: want 1..%d", p.limit, p.most)
	}
	return nil
}

// more writes, under a table, how to ask for the page after it.
func more(w io.Writer, next string) {
	if next != "" {
		fmt.Fprintf(w, "(more: -cursor %s)\n", next)
	}
}

// into is a check that keeps in *v what parse reads from the flags.
func into[T any](v *T, parse func() (T, error)) func() error {
	return func() (err error) {
		*v, err = parse()
		return err
	}
}
