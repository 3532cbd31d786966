package memstore

import (
	"context"

	"github.com/plaitdag/plait/store"
)

// admission holds the caps of [store.AdmissionStore] and the pending tasks
// counted against them, by scope ("q:<queue>", "t:<tenant>"). A run is
// counted against the scopes that had a cap at its creation (admissionCheckLocked)
// and each of its tasks leaves the counts as it ends, in the one status
// function (status.go). A run created while none of its scopes had a cap
// costs one map look-up per scope at its creation, and nothing after.
type admission struct {
	caps    map[string]int64
	pending map[string]int64
}

// admitted names the scopes a run is counted against: its tenant's, when
// tenant is set, and its queues'.
type admitted struct {
	tenant string
	queues map[string]bool
}

func queueScope(q string) string  { return "q:" + q }
func tenantScope(t string) string { return "t:" + t }

// AdmissionSet sets or removes the cap of a queue or a tenant. See
// [store.AdmissionStore].
func (s *Store) AdmissionSet(ctx context.Context, params *store.AdmissionSetParams) (*store.AdmissionSetResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	k := scopeKey(params.AdmissionScope)
	s.mu.Lock()
	defer s.mu.Unlock()
	if params.MaxPending == 0 {
		delete(s.admission.caps, k)
	} else {
		if s.admission.caps == nil {
			s.admission.caps = map[string]int64{}
		}
		s.admission.caps[k] = params.MaxPending
	}
	return &store.AdmissionSetResult{}, nil
}

// AdmissionGet answers the cap of a queue or a tenant and its pending
// tasks. See [store.AdmissionStore].
func (s *Store) AdmissionGet(ctx context.Context, params *store.AdmissionGetParams) (*store.AdmissionGetResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	k := scopeKey(params.AdmissionScope)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.admission.pending[k]
	return &store.AdmissionGetResult{MaxPending: s.admission.caps[k], Pending: n, PendingShardMax: n}, nil
}

func scopeKey(sc store.AdmissionScope) string {
	if sc.Tenant != "" {
		return tenantScope(sc.Tenant)
	}
	return queueScope(sc.Queue)
}

// admissionCheckLocked checks new run r against the caps of its tenant and of its
// tasks' queues, before anything of it is written: it answers an
// [*store.AdmissionError] for the first scope (the tenant, then the queues
// in the order of the tasks) that r would take over its cap, or counts r's
// tasks against every capped scope and marks r so that its tasks leave
// the counts as they end.
func (s *Store) admissionCheckLocked(r *run) error {
	caps := s.admission.caps
	if len(caps) == 0 {
		return nil
	}
	type scope struct {
		key, queue string
		n          int64
	}
	var scopes []scope
	if r.rec.Tenant != "" {
		if _, ok := caps[tenantScope(r.rec.Tenant)]; ok {
			scopes = append(scopes, scope{key: tenantScope(r.rec.Tenant), n: int64(len(r.tasks))})
		}
	}
	at := map[string]int{}
	for i := range r.tasks {
		q := r.tasks[i].inst.Queue
		if j, seen := at[q]; seen {
			if j >= 0 {
				scopes[j].n++
			}
			continue
		}
		at[q] = -1
		if _, ok := caps[queueScope(q)]; ok {
			at[q] = len(scopes)
			scopes = append(scopes, scope{key: queueScope(q), queue: q, n: 1})
		}
	}
	if len(scopes) == 0 {
		return nil
	}
	for _, sc := range scopes {
		most, pending := caps[sc.key], s.admission.pending[sc.key]
		if pending+sc.n > most {
			e := &store.AdmissionError{Queue: sc.queue, MaxPending: most, Pending: pending, Tasks: sc.n}
			if sc.queue == "" {
				e.Tenant = r.rec.Tenant
			}
			return e
		}
	}
	a := &admitted{}
	if s.admission.pending == nil {
		s.admission.pending = map[string]int64{}
	}
	for _, sc := range scopes {
		s.admission.pending[sc.key] += sc.n
		if sc.queue == "" {
			a.tenant = r.rec.Tenant
			continue
		}
		if a.queues == nil {
			a.queues = map[string]bool{}
		}
		a.queues[sc.queue] = true
	}
	r.admitted = a
	return nil
}

// admissionCountLocked moves the counts t's run is counted in by n: -1 as t
// ends, +1 as a replay brings it back. Called from the status function
// only; a run not counted pays one nil check.
func (s *Store) admissionCountLocked(t *task, n int64) {
	a := t.run.admitted
	if a == nil {
		return
	}
	if a.tenant != "" {
		s.admissionAddLocked(tenantScope(a.tenant), n)
	}
	if a.queues[t.inst.Queue] {
		s.admissionAddLocked(queueScope(t.inst.Queue), n)
	}
}

// admissionAddLocked adds n to the count of scope k, dropping a count back at
// zero, so that the map holds only the scopes with pending tasks.
func (s *Store) admissionAddLocked(k string, n int64) {
	if v := s.admission.pending[k] + n; v != 0 {
		s.admission.pending[k] = v
	} else {
		delete(s.admission.pending, k)
	}
}

var _ store.AdmissionStore = (*Store)(nil)
