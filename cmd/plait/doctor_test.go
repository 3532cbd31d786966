package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/plaitdag/plait/cmd/plait/internal/cli"
	"github.com/plaitdag/plait/internal/redistest"
	"github.com/plaitdag/plait/store/redisstore"
)

// doctorServer starts a redis-server with extra arguments and answers the
// URL of its default user, which holds every permission.
func doctorServer(t *testing.T, extra ...string) (*redistest.Server, string) {
	t.Helper()
	srv, err := redistest.Start(extra...)
	if err != nil {
		redistest.Skip(t, err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, "redis://" + srv.Addr
}

// TestBinaryDoctorMisconfigured: on a server with an evicting policy,
// persistence off and a user lacking xadd, plait doctor names each, with
// the value found and the one wanted, and exits 6; the user itself, which
// may read no setting, gets each check it could not make with the reason,
// and exit 0.
func TestBinaryDoctorMisconfigured(t *testing.T) {
	e := &binaryEnv{bin: binary(t)}
	srv, url := doctorServer(t, "--maxmemory-policy", "allkeys-lru")
	admin := srv.Client()
	defer admin.Close()
	args := []any{"ACL", "SETUSER", "plait", "on", ">pw", "resetkeys", "~doc:*", "resetchannels", "&doc:*", "-@all"}
	for _, c := range redisstore.Commands() {
		if c != "xadd" {
			args = append(args, "+"+c)
		}
	}
	if err := admin.Do(context.Background(), args...).Err(); err != nil {
		t.Fatal(err)
	}

	out, errs, code := e.plaitWith(t, url, "doc", "doctor", "-user", "plait")
	if code != cli.ExitDeparts {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, cli.ExitDeparts, out, errs)
	}
	for _, want := range []string{"maxmemory-policy", "allkeys-lru", "noeviction", "appendonly", "acl plait xadd",
		"no permissions to run the 'xadd' command", "maxmemory", "note", "redis_version"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "3 finding(s) depart from docs/operations.md") {
		t.Errorf("stderr: %s", errs)
	}

	out, errs, code = e.plaitWith(t, url, "doc", "doctor", "-user", "plait", "-o", "json")
	var rep redisstore.DoctorReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != cli.ExitDeparts {
		t.Fatalf("exit %d, JSON %v\nstdout: %s\nstderr: %s", code, err, out, errs)
	}
	var got []string
	for _, f := range rep.Findings {
		got = append(got, f.Setting+" "+string(f.Severity)+" "+f.Found+" -> "+f.Want)
	}
	slices.Sort(got)
	want := []string{
		"acl plait xadd error This user has no permissions to run the 'xadd' command -> allowed on doc:*",
		"appendonly warning no (and save \"\") -> yes",
		"maxmemory note 0 -> a limit below the host's memory",
		"maxmemory-policy error allkeys-lru -> noeviction",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	userURL := "redis://plait:pw@" + srv.Addr
	out, errs, code = e.plaitWith(t, userURL, "doc", "doctor")
	if code != cli.ExitOK {
		t.Fatalf("as the user: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	for _, want := range []string{"NOT CHECKED", "maxmemory-policy", "CONFIG GET: NOPERM", "ACL WHOAMI: NOPERM"} {
		if !strings.Contains(out, want) {
			t.Errorf("as the user, the table lacks %q:\n%s", want, out)
		}
	}
}

// TestBinaryDoctorWellConfigured: append-only, noeviction and a maxmemory:
// nothing departs, exit 0.
func TestBinaryDoctorWellConfigured(t *testing.T) {
	e := &binaryEnv{bin: binary(t)}
	_, url := doctorServer(t, "--appendonly", "yes", "--maxmemory", "64mb", "--maxmemory-policy", "noeviction")
	out, errs, code := e.plaitWith(t, url, "doc", "doctor")
	if code != cli.ExitOK || errs != "" {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if !strings.Contains(out, "No setting or permission departs from docs/operations.md.") || strings.Contains(out, "NOT CHECKED") {
		t.Fatalf("stdout: %s", out)
	}
}
