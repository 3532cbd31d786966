package plait

import "github.com/plaitdag/plait/store"

// W3C trace context (https://www.w3.org/TR/trace-context/) travels with a
// run in its metadata under these keys, so a span started where the run is
// submitted can be the parent of the spans its handlers start, in any
// process. plait only carries the two strings; a tracing library injects
// and extracts them (see examples/otel).
const (
	// TraceParentKey is the metadata key of the traceparent header.
	TraceParentKey = "traceparent"
	// TraceStateKey is the metadata key of the tracestate header.
	TraceStateKey = "tracestate"
)

// traceStateMax bounds the tracestate kept, as the W3C recommendation
// allows a receiver to: 32 members of at most 256 bytes and separators.
const traceStateMax = 8192

// WithTraceContext carries W3C trace context with the run: traceparent and
// tracestate are kept in its metadata under [TraceParentKey] and
// [TraceStateKey], and each of its handlers gets them back from
// [RunInfo.TraceContext]. A traceparent that is not well formed is dropped
// together with its tracestate, as the W3C recommendation asks of a
// receiver; so is a tracestate over 8 KiB. Give it after [WithMetadata],
// which replaces the metadata as a whole.
func WithTraceContext(traceparent, tracestate string) SubmitOption {
	return submitOption{"WithTraceContext(" + quote(traceparent) + ")", func(p *store.RunCreateParams) {
		if !validTraceParent(traceparent) {
			return
		}
		md := make(map[string]string, len(p.Metadata)+2)
		for k, v := range p.Metadata {
			md[k] = v
		}
		md[TraceParentKey] = traceparent
		delete(md, TraceStateKey)
		if tracestate != "" && len(tracestate) <= traceStateMax {
			md[TraceStateKey] = tracestate
		}
		p.Metadata = md
	}}
}

// validTraceParent checks the traceparent format
// "vv-<32 hex trace id>-<16 hex parent id>-<2 hex flags>", lower-case hex,
// with an all-zero trace or parent id invalid and version ff forbidden. A
// later version may append fields after a dash, which are ignored.
func validTraceParent(s string) bool {
	if len(s) < 55 || (len(s) > 55 && s[55] != '-') {
		return false
	}
	if s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return false
	}
	if !lowerHex(s[0:2]) || s[0:2] == "ff" || !lowerHex(s[3:35]) || !lowerHex(s[36:52]) || !lowerHex(s[53:55]) {
		return false
	}
	if s[0:2] == "00" && len(s) != 55 {
		return false
	}
	return !allZero(s[3:35]) && !allZero(s[36:52])
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}
