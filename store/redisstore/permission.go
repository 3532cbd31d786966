package redisstore

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrPermission is the category of [*PermissionError].
var ErrPermission = errors.New("redisstore: the Redis user lacks a permission the store needs")

// PermissionError is what a store method answers when Redis refused a
// command for the ACL user's permissions: a command the user may not run,
// or a key or channel outside its patterns. It matches [ErrPermission] with
// errors.Is and unwraps to Redis's reply. [Commands] lists the commands a
// store needs, and docs/operations.md the user to create; `plait doctor`
// names every one a user lacks.
type PermissionError struct {
	// Command is the refused command in the form of [Commands] ("xadd",
	// "function|load"). When a script's line was refused and that line
	// runs several commands, Command names them joined by " or "; it is
	// empty when Redis's reply names none and no script line says.
	Command string
	// Script is the script whose command Redis refused (the store method's
	// name: "task_claim"), empty for a command the store sent itself.
	Script string
	// Denied is what the user may not use: "command", "key" or "channel".
	Denied string
	// Err is Redis's reply.
	Err error
}

// Error says what was refused, where, and what to do.
func (e *PermissionError) Error() string {
	var b strings.Builder
	b.WriteString("redisstore: the Redis user may not ")
	switch e.Denied {
	case "key":
		b.WriteString("touch a key of the store's prefix")
	case "channel":
		b.WriteString("use a channel of the store's prefix")
	default:
		b.WriteString("run a command the store needs")
	}
	if e.Command != "" {
		b.WriteString(" (" + e.Command + ")")
	}
	if e.Script != "" {
		b.WriteString(" in the script " + e.Script)
	}
	if e.Denied == "command" {
		b.WriteString("; allow every command of redisstore.Commands")
	} else {
		b.WriteString("; allow the keys and channels \"<prefix>:*\"")
	}
	b.WriteString(" (docs/operations.md, plait doctor): ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Is matches [ErrPermission].
func (e *PermissionError) Is(target error) bool { return target == ErrPermission }

// Unwrap returns Redis's reply.
func (e *PermissionError) Unwrap() error { return e.Err }

// Redis's replies to a refusal: a command the client sent ("NOPERM this
// user has no permissions to run the 'hget' command", "... to access one
// of the keys ...", "... one of the channels ..."), and, from Redis 7.0, a
// command a script ran ("ERR The user executing the script can't run this
// command or subcommand script: <function or sha>, on
// @user_function:<line>.", "can't access at least one of the keys", "can't
// publish to the channel"), where only the line of the script names the
// command.
var (
	permCommand    = regexp.MustCompile(`permissions to run the '([^']+)' command`)
	permScriptLine = regexp.MustCompile(`script: ([0-9A-Za-z_]+), on @user_(function|script):([0-9]+)`)
	luaCall        = regexp.MustCompile(`redis\.p?call\(\s*'([A-Za-z]+)'`)
)

// permissionErr answers the *PermissionError err is, or nil when err is
// no refusal for permissions.
func permissionErr(err error) *PermissionError {
	var re redis.Error
	if !errors.As(err, &re) {
		return nil
	}
	msg := re.Error()
	pe := &PermissionError{Err: err}
	switch {
	case strings.HasPrefix(msg, "NOPERM"):
		pe.Denied = deniedOf(msg)
		if m := permCommand.FindStringSubmatch(msg); m != nil {
			pe.Command = m[1]
		}
	case strings.Contains(msg, "The user executing the script can't"):
		pe.Denied = deniedOf(msg)
	default:
		return nil
	}
	if m := permScriptLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[3])
		src := ""
		if m[2] == "function" {
			pe.Script, _ = strings.CutPrefix(m[1], libraryName+"_")
			src = library
		} else {
			pe.Script, src = scriptBySHA(m[1])
		}
		if pe.Command == "" {
			pe.Command = strings.Join(lineCommands(src, line), " or ")
		}
	}
	return pe
}

// deniedOf reads what a refusal is about from its message.
func deniedOf(msg string) string {
	switch {
	case strings.Contains(msg, "keys"):
		return "key"
	case strings.Contains(msg, "channel"):
		return "channel"
	}
	return "command"
}

// lineCommands answers the distinct commands line n (from 1) of src runs
// with redis.call or redis.pcall, in the form of Commands.
func lineCommands(src string, n int) []string {
	lines := strings.Split(src, "\n")
	if n < 1 || n > len(lines) {
		return nil
	}
	var out []string
	for _, m := range luaCall.FindAllStringSubmatch(lines[n-1], -1) {
		c := strings.ToLower(m[1])
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// scriptBySHA answers the name and source of the script whose EVALSHA form
// has sha, or "" twice. It hashes every source again: it runs only on a
// refusal.
func scriptBySHA(sha string) (name, src string) {
	for _, n := range scriptNames {
		s := scriptSource(n)
		sum := sha1.Sum([]byte(s))
		if hex.EncodeToString(sum[:]) == sha {
			return n, s
		}
	}
	return "", ""
}
