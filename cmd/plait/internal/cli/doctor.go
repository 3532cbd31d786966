package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/plaitdag/plait/store/redisstore"
)

func doctorCommands() []command {
	return []command{
		{path: "doctor", short: "report each Redis setting and ACL permission that departs from docs/operations.md", flags: doctor},
	}
}

// departsError is a doctor that found a warning or an error: exit code
// ExitDeparts.
type departsError struct{ n int }

func (e *departsError) Error() string {
	return fmt.Sprintf("%d finding(s) depart from docs/operations.md", e.n)
}

// doctor runs redisstore.Doctor over the -redis URL's servers. It opens
// no store: it reads settings only, and needs no layout record under the
// prefix.
func doctor(fs *flag.FlagSet) func(*env, []string) error {
	user := fs.String("user", "", "the ACL user whose permissions are checked (default: the connected user)")
	return func(e *env, args []string) error {
		if err := wantArgs(args, 0, "no argument"); err != nil {
			return err
		}
		client, err := RedisClient(e.conn)
		if err != nil {
			return usagef("%v", err)
		}
		defer client.Close()
		rep, err := redisstore.Doctor(e.ctx, client, &redisstore.DoctorParams{Prefix: e.conn.Prefix, User: *user})
		if err != nil {
			return err
		}
		if err := e.emit(rep, func(w io.Writer) { doctorTable(w, rep) }); err != nil {
			return err
		}
		n := 0
		for _, f := range rep.Findings {
			if f.Severity != redisstore.SeverityNote {
				n++
			}
		}
		if n > 0 {
			return &departsError{n: n}
		}
		return nil
	}
}

// doctorTable writes the facts, the findings and what was not checked,
// one section each.
func doctorTable(w io.Writer, rep *redisstore.DoctorReport) {
	if len(rep.Facts) > 0 {
		row(w, "NODE", "FACT", "VALUE")
		for _, f := range rep.Facts {
			row(w, f.Node, f.Name, f.Value)
		}
		row(w)
	}
	switch {
	case len(rep.Findings) == 0 && len(rep.Unchecked) > 0:
		fmt.Fprintln(w, "No setting or permission checked departs from docs/operations.md; some could not be checked.")
	case len(rep.Findings) == 0:
		fmt.Fprintln(w, "No setting or permission departs from docs/operations.md.")
	default:
		row(w, "NODE", "SEVERITY", "SETTING", "FOUND", "WANT", "WHY")
		for _, f := range rep.Findings {
			row(w, f.Node, f.Severity, f.Setting, clip(f.Found, 60), f.Want, f.Message)
		}
	}
	if len(rep.Unchecked) > 0 {
		row(w)
		row(w, "NODE", "NOT CHECKED", "REASON")
		for _, u := range rep.Unchecked {
			row(w, u.Node, u.Setting, u.Reason)
		}
	}
}

// isDeparts reports whether err is the doctor's finding.
func isDeparts(err error) bool {
	var de *departsError
	return errors.As(err, &de)
}
