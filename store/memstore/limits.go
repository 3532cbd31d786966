package memstore

// MaxResultBytesDefault is the largest result a finish stores: the same as
// the Redis store's default, so a result too large for one store is too
// large for both.
const MaxResultBytesDefault = 32 << 20

// WithMaxResultBytes sets the largest result a finish stores; a larger one
// is refused for its outcome alone with [store.ErrResultTooLarge]. Defaults
// to MaxResultBytesDefault; zero or negative means the default.
func WithMaxResultBytes(n int) Option {
	return func(s *Store) {
		if n > 0 {
			s.maxResult = n
		}
	}
}
