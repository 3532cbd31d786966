package memstore

import "github.com/plaitdag/plait/store"

// Claim answers are handed out from blocks shared across claim calls, so
// a claim of n tasks costs about n/answerBlock allocations for the answers
// and their payloads instead of 2n. Each answer and each payload copy is
// its own region of a block, never handed out twice: a caller may change
// what it was given without touching the store or another answer. A block
// lives as long as any answer cut from it, a bounded cost: answerBlock
// answers, or answerBytes bytes.
const (
	answerBlock = 32
	answerBytes = 8 << 10
	// answerOwnBytes is the payload size from which a copy gets its own
	// allocation rather than a region of the shared block.
	answerOwnBytes = 1 << 10
)

// answers is the store's supply of claim answers; only used under s.mu.
type answers struct {
	tasks []store.ClaimedTask
	bytes []byte
}

// task returns a zeroed answer of its own.
func (a *answers) task() *store.ClaimedTask {
	if len(a.tasks) == 0 {
		a.tasks = make([]store.ClaimedTask, answerBlock)
	}
	ct := &a.tasks[0]
	a.tasks = a.tasks[1:]
	return ct
}

// copyBytes returns a copy of b that shares no byte with b or with another
// copy, and whose capacity ends with it: an append by its holder
// reallocates instead of writing over the next copy. nil stays nil.
func (a *answers) copyBytes(b []byte) []byte {
	n := len(b)
	if b == nil {
		return nil
	}
	if n == 0 {
		return []byte{}
	}
	if n >= answerOwnBytes {
		return copyBytes(b)
	}
	if cap(a.bytes)-len(a.bytes) < n {
		a.bytes = make([]byte, 0, answerBytes)
	}
	start := len(a.bytes)
	a.bytes = append(a.bytes, b...)
	return a.bytes[start : start+n : start+n]
}

// copySpecSlices gives out, a shallow copy of spec, a payload, deps,
// requirements and limits of its own, as copySpec does.
func (a *answers) copySpecSlices(out, spec *store.TaskSpec) {
	out.Payload = a.copyBytes(spec.Payload)
	if spec.Deps != nil {
		out.Deps = append([]store.Dep(nil), spec.Deps...)
	}
	if spec.Requires != nil {
		out.Requires = append([]string(nil), spec.Requires...)
	}
	if spec.Limits != nil {
		out.Limits = append([]store.TaskLimit(nil), spec.Limits...)
	}
}
