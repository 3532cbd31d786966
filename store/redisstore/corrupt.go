package redisstore

// ErrCorrupt is the category of errors about a stored record this store
// cannot read: bytes damaged by hand or by a failing disk, a field missing,
// a record of a format version it does not read ([*RecordVersionError]).
// Test with errors.Is; the message names the record (the run, and the task
// when it is one task's field). A claim drops the queue entry of a task
// whose record it cannot read and a sweep the lease entry, each leaving
// the record as it is for an operator, and going on with the other runs.
var ErrCorrupt = errCorrupt
