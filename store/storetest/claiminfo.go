package storetest

import (
	"testing"

	"github.com/plaitdag/plait/store"
	"github.com/stretchr/testify/require"
)

func testClaimInfo(t *testing.T, newHarness func(t *testing.T) *Harness) {
	runCases(t, newHarness, []testCase{
		{
			name: "RunFields",
			rule: "a claimed task carries its run's workflow, tenant, service and metadata, also for several tasks of one run in one claim and for a run with none",
			run: func(t *testing.T, h *Harness, rule string) {
				md := map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "who": "alice"}
				r1 := createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b")),
					Tenant: "acme", Service: "billing", Metadata: md})
				r2 := createRun(t, h, nil)
				res := claim(t, h, nil)
				require.Len(t, res.Tasks, 3, rule)
				for _, ct := range res.Tasks {
					require.Equal(t, "wf", ct.Workflow, rule)
					switch ct.Lease.RunID {
					case r1.ID:
						require.Equal(t, "acme", ct.Tenant, rule)
						require.Equal(t, "billing", ct.Service, rule)
						require.Equal(t, md, ct.Metadata, rule)
					case r2.ID:
						require.Empty(t, ct.Tenant, rule)
						require.Empty(t, ct.Service, rule)
						require.Empty(t, ct.Metadata, rule)
					default:
						t.Fatalf("%s: claimed a task of an unknown run %s", rule, ct.Lease.RunID)
					}
				}
			},
		},
		{
			name: "Replayed",
			rule: "a claim sent again with the same RequestID answers the run fields as the first one did",
			run: func(t *testing.T, h *Harness, rule string) {
				md := map[string]string{"k": "v"}
				createRun(t, h, &runOpts{Workflow: spec(store.StrategyContinue, task("a"), task("b")),
					Tenant: "acme", Service: "billing", Metadata: md})
				first := claim(t, h, &claimOpts{RequestID: "req-info"})
				again := claim(t, h, &claimOpts{RequestID: "req-info"})
				require.Len(t, again.Tasks, len(first.Tasks), rule)
				for _, ct := range again.Tasks {
					require.Equal(t, "wf", ct.Workflow, rule)
					require.Equal(t, "acme", ct.Tenant, rule)
					require.Equal(t, "billing", ct.Service, rule)
					require.Equal(t, md, ct.Metadata, rule)
				}
			},
		},
	})
}
