package dag

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// stateOrder ranks task states worst first: what needs an operator's eye
// (dead, failed), then what is moving, then what is waiting, then what is
// done. A state not listed ranks after all of these.
var stateOrder = [...]string{
	"dead", "failed", "retrying", "cancelled", "running", "ready",
	"pending", "skipped", "succeeded",
}

// StateRank is s's rank, 0 the worst; a group shows its worst member's
// state.
func StateRank(s string) int {
	for i, o := range stateOrder {
		if o == s {
			return i
		}
	}
	return len(stateOrder)
}

// newGroup describes box b: its ID, label, members and states.
func newGroup(g *Graph, b *box) Group {
	members := b.members
	if !b.chain {
		members = slices.Clone(members)
		slices.Sort(members)
	}
	gr := Group{Chain: b.chain, Members: make([]string, len(members))}
	count := map[string]int{}
	for i, m := range members {
		n := &g.Nodes[m]
		gr.Members[i] = n.ID
		count[n.State]++
	}
	gr.ID = "group:" + gr.Members[0]
	for s, c := range count {
		gr.Counts = append(gr.Counts, StateCount{s, c})
	}
	slices.SortFunc(gr.Counts, func(a, b StateCount) int {
		if c := cmp.Compare(StateRank(a.State), StateRank(b.State)); c != 0 {
			return c
		}
		return cmp.Compare(a.State, b.State)
	})
	gr.State = gr.Counts[0].State
	n := len(gr.Members)
	if gr.Chain {
		gr.Label = "chain of " + thousands(n) + " tasks"
	} else if pre := commonPrefix(gr.Members); pre != "" {
		gr.Label = pre + "* ×" + thousands(n)
	} else {
		gr.Label = thousands(n) + " tasks"
	}
	return gr
}

// commonPrefix is the prefix all of ids share, cut back to a whole rune.
func commonPrefix(ids []string) string {
	pre := ids[0]
	for _, id := range ids[1:] {
		i := 0
		for i < len(pre) && i < len(id) && pre[i] == id[i] {
			i++
		}
		pre = pre[:i]
		if pre == "" {
			return ""
		}
	}
	return strings.ToValidUTF8(pre, "")
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 || len(s) <= 3 {
		return s
	}
	var b strings.Builder
	lead := len(s) % 3
	if lead > 0 {
		b.WriteString(s[:lead])
	}
	for i := lead; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}
