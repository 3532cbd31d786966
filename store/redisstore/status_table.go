package redisstore

import (
	"strconv"
	"strings"

	"github.com/plaitdag/plait/store"
)

// letterStatus is a status letter of the store's records and the plait
// status it stands for.
type letterStatus struct{ letter, status string }

// taskLetters are the letters of a task's state field. P and W are both
// pending: W is a pending task waiting in the delayed set for its run-at
// time, P one waiting for its parents.
var taskLetters = []letterStatus{
	{"P", string(store.TaskPending)}, {"W", string(store.TaskPending)}, {"R", string(store.TaskReady)},
	{"U", string(store.TaskRunning)}, {"Y", string(store.TaskRetrying)}, {"S", string(store.TaskSucceeded)},
	{"F", string(store.TaskFailed)}, {"K", string(store.TaskSkipped)}, {"C", string(store.TaskCancelled)},
	{"D", string(store.TaskDead)},
}

// runLetters are the letters of a run's meta field.
var runLetters = []letterStatus{
	{"P", string(store.RunPending)}, {"U", string(store.RunRunning)}, {"S", string(store.RunCompleted)},
	{"F", string(store.RunFailed)}, {"C", string(store.RunCancelled)},
}

// letterMoves is a status table in letters: from "" (a record being
// created) and from each letter, the letters that plait's check can allows
// moving to. A move between two letters of one status (task P and W) is no
// status change and allowed.
func letterMoves(ls []letterStatus, can func(from, to string) bool) (froms []string, moves map[string][]string) {
	moves = map[string][]string{}
	for _, f := range append([]letterStatus{{"", ""}}, ls...) {
		froms = append(froms, f.letter)
		moves[f.letter] = []string{}
		for _, t := range ls {
			if can(f.status, t.status) || (f.letter != "" && f.status == t.status && f.letter != t.letter) {
				moves[f.letter] = append(moves[f.letter], t.letter)
			}
		}
	}
	return froms, moves
}

// statusTable renders plait's status machine into the Lua tables that
// task_to and run_to check (lua/lib_status.lua): task_moves and run_moves
// (from letter -> set of letters), task_final and run_final (the letters
// that lead nowhere), task_replay and run_replay (the moves only a replay
// may take, from ReplayNext), and apart_max_tasks. A refused move answers
// ILLEGAL, which codesTable renders.
func statusTable() string {
	var b strings.Builder
	b.WriteString("-- Rendered by status_table.go from plait's status machine (store/transition.go).\n")
	write := func(kind string, ls []letterStatus, can func(from, to string) bool) {
		froms, moves := letterMoves(ls, can)
		b.WriteString("local " + kind + "_moves = {\n")
		for _, from := range froms {
			b.WriteString("  [" + strconv.Quote(from) + "] = {" + luaSet(moves[from]) + "},\n")
		}
		b.WriteString("}\n")
		var final []string
		for _, l := range ls {
			if len(moves[l.letter]) == 0 {
				final = append(final, l.letter)
			}
		}
		b.WriteString("local " + kind + "_final = {" + luaSet(final) + "}\n")
	}
	write("task", taskLetters, func(from, to string) bool {
		return store.TaskStatus(from).CanBecome(store.TaskStatus(to))
	})
	write("run", runLetters, func(from, to string) bool {
		return store.RunStatus(from).CanBecome(store.RunStatus(to))
	})
	// The replay moves are tables of their own: task_to and run_to take
	// them only for a step that sets ctx.replay, so no other step can
	// revive a finished task or run.
	replay := func(kind string, ls []letterStatus, next func(status string) []string) {
		b.WriteString("local " + kind + "_replay = {\n")
		for _, f := range ls {
			var to []string
			for _, n := range next(f.status) {
				for _, l := range ls {
					// A replayed task goes back to pending waiting for its
					// parents (P); make_due moves it on as a create would.
					if l.status == n && (kind != "task" || l.letter == "P") {
						to = append(to, l.letter)
					}
				}
			}
			if len(to) > 0 {
				b.WriteString("  [" + strconv.Quote(f.letter) + "] = {" + luaSet(to) + "},\n")
			}
		}
		b.WriteString("}\n")
	}
	replay("task", taskLetters, func(status string) []string {
		var out []string
		for _, n := range store.TaskStatus(status).ReplayNext() {
			out = append(out, string(n))
		}
		return out
	})
	replay("run", runLetters, func(status string) []string {
		var out []string
		for _, n := range store.RunStatus(status).ReplayNext() {
			out = append(out, string(n))
		}
		return out
	})
	// The largest run whose long payloads are kept apart (create.go): the
	// scripts that expire or delete a finished run's payload keys visit
	// its task names only up to it.
	b.WriteString("local apart_max_tasks = " + strconv.Itoa(apartMaxTasks) + "\n")
	return b.String()
}

// luaSet writes the body of a Lua table holding each of ls as a key.
func luaSet(ls []string) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l + " = true"
	}
	return strings.Join(parts, ", ")
}
