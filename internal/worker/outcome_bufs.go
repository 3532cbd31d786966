package worker

import (
	"sync"

	"github.com/plaitdag/plait/store"
)

// outcomeBufs lends the slices a finish call sends its outcomes in: the
// store reads them during the call and keeps none, so each driver's next
// batch reuses one instead of allocating a copy of every outcome per call.
type outcomeBufs struct{ pool sync.Pool }

// get returns the outcomes of batch in a lent slice; put gives it back.
func (b *outcomeBufs) get(batch []finishReq) *[]store.TaskOutcome {
	buf, _ := b.pool.Get().(*[]store.TaskOutcome)
	if buf == nil {
		buf = new([]store.TaskOutcome)
	}
	out := (*buf)[:0]
	for _, r := range batch {
		out = append(out, r.o)
	}
	*buf = out
	return buf
}

// put takes back a slice get lent, cleared first so that it keeps no
// result or error alive.
func (b *outcomeBufs) put(buf *[]store.TaskOutcome) {
	clear(*buf)
	*buf = (*buf)[:0]
	b.pool.Put(buf)
}
