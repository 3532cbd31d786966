package inspector

import (
	"net/http"

	"github.com/plaitdag/plait"
	"github.com/plaitdag/plait/internal/apijson"
)

// scheduleNote is the sentence the schedule page shows by its controls.
const scheduleNote = "A process that saves a schedule at start-up (ScheduleSave) overwrites a pause or a resume made here when it starts again."

type scheduleJSON struct {
	Name            string        `json:"name"`
	Spec            string        `json:"spec"`
	TimeZone        string        `json:"timeZone,omitempty"`
	Paused          bool          `json:"paused"`
	CatchUp         string        `json:"catchUp,omitempty"`
	CatchUpWindowMs int64         `json:"catchUpWindowMs,omitempty"`
	Overlap         string        `json:"overlap,omitempty"`
	JitterMs        int64         `json:"jitterMs,omitempty"`
	Tenant          string        `json:"tenant,omitempty"`
	Service         string        `json:"service,omitempty"`
	NextFire        apijson.Stamp `json:"nextFire,omitzero"`
	LastFire        apijson.Stamp `json:"lastFire,omitzero"`
	LastRunID       string        `json:"lastRunId,omitempty"`
	LastRunStatus   string        `json:"lastRunStatus,omitempty"`
	Version         int64         `json:"version"`
	UpdatedAt       apijson.Stamp `json:"updatedAt,omitzero"`
}

func scheduleOf(s *plait.ScheduleInfo) scheduleJSON {
	return scheduleJSON{Name: s.Name, Spec: s.Spec, TimeZone: s.TimeZone, Paused: s.Paused, CatchUp: string(s.CatchUp),
		CatchUpWindowMs: apijson.Millis(s.CatchUpWindow), Overlap: string(s.Overlap), JitterMs: apijson.Millis(s.Jitter),
		Tenant: s.Tenant, Service: s.Service, NextFire: apijson.Stamp(s.NextFire), LastFire: apijson.Stamp(s.LastFire),
		LastRunID: s.LastRunID, LastRunStatus: string(s.LastRunStatus), Version: s.Version, UpdatedAt: apijson.Stamp(s.UpdatedAt)}
}

// serveSchedules answers every saved schedule: GET /api/v1/schedules.
func (h *handler) serveSchedules(w http.ResponseWriter, r *http.Request, _ params) {
	list, err := h.s.ScheduleList(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := struct {
		Items []scheduleJSON `json:"items"`
		Note  string         `json:"note"`
	}{Items: make([]scheduleJSON, len(list)), Note: scheduleNote}
	for i, s := range list {
		out.Items[i] = scheduleOf(s)
	}
	writeJSON(w, r, http.StatusOK, out)
}
