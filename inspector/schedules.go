package inspector

import (
	"net/http"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/apijson"
)

// scheduleNote is the sentence the schedule page shows by its controls.
const scheduleNote = "A process that saves a schedule at start-up (ScheduleSave) overwrites a pause or a resume made here when it starts again."

// scheduleOf converts s with every field the API prints.
func scheduleOf(s *plait.ScheduleInfo) apijson.Schedule {
	out := apijson.ScheduleOf(s)
	out.CatchUp, out.CatchUpWindowMs = string(s.CatchUp), apijson.Millis(s.CatchUpWindow)
	out.Overlap, out.JitterMs = string(s.Overlap), apijson.Millis(s.Jitter)
	out.UpdatedAt = apijson.Stamp(s.UpdatedAt)
	return out
}

// serveSchedules answers every saved schedule: GET /api/v1/schedules.
func (h *handler) serveSchedules(w http.ResponseWriter, r *http.Request, _ params) {
	list, err := h.s.ScheduleList(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := struct {
		Items []apijson.Schedule `json:"items"`
		Note  string             `json:"note"`
	}{Items: make([]apijson.Schedule, len(list)), Note: scheduleNote}
	for i, s := range list {
		out.Items[i] = scheduleOf(s)
	}
	writeJSON(w, r, http.StatusOK, out)
}
