package inspector

import (
	"context"
	"net/http"
	"strings"

	"github.com/plaitdag/plait"
)

// tailTypesMax is the most event types a tail may name.
const tailTypesMax = 32

// serveTail streams the whole store's events from now, or from the
// client's last id: GET /api/v1/events.
func (h *handler) serveTail(w http.ResponseWriter, r *http.Request, _ params) {
	after, err := resumeCursor(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	f := plait.SubscribeFilter{Workflow: q.Get("workflow"), Service: q.Get("service"), Tenant: q.Get("tenant"), After: after, FromNow: after == ""}
	for _, v := range []string{f.Workflow, f.Service, f.Tenant} {
		if err := checkParams(params{id: v}); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	for _, v := range q["types"] {
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				f.Types = append(f.Types, plait.StoreEventType(t))
			}
		}
	}
	if len(f.Types) > tailTypesMax {
		h.fail(w, r, errBadRequest("%d event types, want at most %d", len(f.Types), tailTypesMax))
		return
	}
	for _, t := range f.Types {
		if err := checkParams(params{id: string(t)}); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	sub, err := h.s.Subscribe(ctx, &f)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.stream(ctx, cancel, w, r, sub, "tail")
}
