package plait

import "encoding/json"

// Codec turns payloads and results into bytes and back. The scheduler uses
// one codec for every task (see [WithCodec]). Defaults to [JSONCodec].
type Codec interface {
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

// JSONCodec encodes with encoding/json.
type JSONCodec struct{}

// Marshal implements Codec.
func (JSONCodec) Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Unmarshal implements Codec.
func (JSONCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// Raw is a payload or result that is stored as it is, without the codec.
type Raw []byte

func encodeValue(c Codec, v any) ([]byte, error) {
	switch b := v.(type) {
	case nil:
		return nil, nil
	case Raw:
		return []byte(b), nil
	}
	return c.Marshal(v)
}
