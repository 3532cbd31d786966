package inspector_test

import (
	"errors"
	"log"
	"net/http"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/inspector"
	"github.com/plaitdag/plait/store/memstore"
)

// The view mounted under /ops/plait/ of a host's server, writable for the
// users the host calls admins, read-only for the others.
func ExampleNew() {
	st, err := memstore.New()
	if err != nil {
		log.Fatal(err)
	}
	s, err := plait.New(st) // a client: the view needs no Run
	if err != nil {
		log.Fatal(err)
	}
	isAdmin := func(r *http.Request) bool { return r.Header.Get("X-Role") == "admin" }
	h, err := inspector.New(s,
		inspector.WithReadOnly(false),
		inspector.WithAuthorizer(func(r *http.Request, action, resource string) error {
			if action != inspector.ActionRead && !isAdmin(r) {
				return errors.New("admins only")
			}
			return nil
		}),
		inspector.WithRedactor(func(kind, runID, task string, data []byte) []byte {
			if task == "charge" {
				return nil // card numbers stay out of the view
			}
			return data
		}),
	)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ops/plait/", http.StripPrefix("/ops/plait", h))
	_ = &http.Server{Addr: "127.0.0.1:8080", Handler: mux}
}
