package redisstore

import (
	"bytes"
	"compress/flate"
	"io"
	"sync"
)

// Payloads and results are stored as one flag byte followed by the bytes:
// valueRaw, or valueDeflate for a DEFLATE stream (compress/flate). Values
// written with and without WithCompression decode alike.
const (
	valueRaw     = 0
	valueDeflate = 1
)

// valueCodec encodes payloads and results. threshold 0 stores them raw;
// otherwise a value of at least threshold bytes is compressed when that
// makes it smaller.
type valueCodec struct {
	threshold int
}

var flateWriters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.DefaultCompression)
	return w
}}

// encode returns the stored form of b: the flag byte, then the bytes.
func (c valueCodec) encode(b []byte) string {
	if c.threshold > 0 && len(b) >= c.threshold {
		var buf bytes.Buffer
		buf.Grow(len(b)/2 + 16)
		buf.WriteByte(valueDeflate)
		w := flateWriters.Get().(*flate.Writer)
		w.Reset(&buf)
		_, werr := w.Write(b)
		cerr := w.Close()
		flateWriters.Put(w)
		if werr == nil && cerr == nil && buf.Len() < len(b)+1 {
			return buf.String()
		}
	}
	out := make([]byte, 0, len(b)+1)
	out = append(out, valueRaw)
	return string(append(out, b...))
}

var flateReaders sync.Pool

// decodeValue returns the bytes of a stored value; the empty string (no
// value) is nil.
func decodeValue(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	switch s[0] {
	case valueRaw:
		return []byte(s[1:]), nil
	case valueDeflate:
		src := bytes.NewReader([]byte(s[1:]))
		var r io.ReadCloser
		if v := flateReaders.Get(); v != nil {
			r = v.(io.ReadCloser)
			if err := r.(flate.Resetter).Reset(src, nil); err != nil {
				return nil, corrupt("compressed value: %v", err)
			}
		} else {
			r = flate.NewReader(src)
		}
		out, err := io.ReadAll(r)
		flateReaders.Put(r)
		if err != nil {
			return nil, corrupt("compressed value: %v", err)
		}
		return out, nil
	}
	return nil, corrupt("value flag %d", s[0])
}
