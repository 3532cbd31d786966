package redisstore

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/plaitdag/plait/store"
)

// Script reply codes: the first value of a script's reply (or of each
// outcome's pair in task_finish.lua's), rendered into Lua by codesTable.
const (
	codeOK       = 0
	codeNotFound = 1
	codeStale    = 2
	codeInvalid  = 3
	codeCorrupt  = 4
	codeIllegal  = 5 // a status move plait's status machine does not allow
	codeActive   = 6 // a delete of a run that has not finished
)

// codeErrors is the one table mapping script return codes to sentinels.
var codeErrors = map[int64]error{
	codeNotFound: store.ErrNotFound,
	codeStale:    store.ErrStaleEpoch,
	codeInvalid:  store.ErrInvalidArgument,
	codeCorrupt:  errCorrupt,
	codeIllegal:  store.ErrIllegalTransition,
	codeActive:   store.ErrRunActive,
}

// codeErr returns the error of a script return code, nil for codeOK.
func codeErr(code int64) error {
	if code == codeOK {
		return nil
	}
	if err, ok := codeErrors[code]; ok {
		return err
	}
	return fmt.Errorf("redisstore: unknown script code %d", code)
}

// luaCodes names every reply code in Lua, the shared ones and those one
// script answers beyond them (createKeyTaken, createAdmission, the replay codes): Lua
// writes the name, never the number, so Go and Lua cannot drift apart.
var luaCodes = []struct {
	name string
	code int
}{
	{"OK", codeOK}, {"NOT_FOUND", codeNotFound}, {"STALE", codeStale}, {"INVALID", codeInvalid},
	{"CORRUPT", codeCorrupt}, {"ILLEGAL", codeIllegal}, {"ACTIVE", codeActive},
	{"KEY_TAKEN", createKeyTaken},
	{"REPLAY_EXISTING", replayExisting}, {"REPLAY_CONFLICT", replayConflict},
	{"REPLAY_NOT_REPLAY", replayNotReplay}, {"REPLAY_PAYLOAD_GONE", replayPayloadGone},
	{"TASK_CONTROL_REFUSED", taskControlRefused},
	{"ADMISSION", createAdmission},
}

// codesLib stands, in libOrder, for the locals codesTable renders.
const codesLib = "(reply codes)"

// codesTable renders luaCodes as Lua locals, one statement, put before
// every lib file so that any of them may answer a code.
func codesTable() string {
	names := make([]string, len(luaCodes))
	values := make([]string, len(luaCodes))
	for i, c := range luaCodes {
		names[i], values[i] = c.name, strconv.Itoa(c.code)
	}
	return "-- Rendered by codes.go from the Go reply codes.\n" +
		"local " + strings.Join(names, ", ") + " = " + strings.Join(values, ", ") + "\n"
}
