package redisstore

import "strconv"

// Format versions a store writes (see [WithFormatVersion]).
const (
	// FormatVersionNewest is the format version this plait writes by
	// default, the newest it reads (the package's record formats list what
	// each version changed).
	FormatVersionNewest = formatVersion
	// FormatVersionPrevious is the version the previous release wrote,
	// which this plait can still write for a rolling upgrade.
	FormatVersionPrevious = formatVersion - 1
)

// WithFormatVersion sets the format version of the runs this store
// creates. Defaults to [FormatVersionNewest]. A run keeps the version it
// was created in for its whole life, whichever process works on it, and
// every version from the oldest read is read (RunGet, queries, events,
// history). Set [FormatVersionPrevious] on the upgraded processes during a
// rolling upgrade from the previous release, whose scripts cannot work on
// a run of the newer format, and drop the option once no process of that
// release is left (docs/operations.md, "Upgrading"). Any other version is
// an error.
func WithFormatVersion(v int) Option {
	return func(c *config) {
		if v != FormatVersionNewest && v != FormatVersionPrevious {
			c.reject("WithFormatVersion", strconv.Itoa(v),
				"want "+strconv.Itoa(FormatVersionPrevious)+" or "+strconv.Itoa(FormatVersionNewest))
			return
		}
		c.format = byte(v)
	}
}
