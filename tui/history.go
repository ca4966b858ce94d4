package tui

import (
	"slices"

	"github.com/mqlab/mqlab/tui/view"
)

// DefaultHistory is how many past states the history ring keeps.
const DefaultHistory = 2000

// history keeps past states as they arrive, in a bounded ring, so [ and ]
// can step back through them. Consecutive states share the log windows and
// table rows that did not change, so 2,000 states cost little more than
// the changes between them.
type history struct {
	states []*view.State // oldest first
	first  int           // absolute index of states[0]
	limit  int
	// cursor is the absolute index being looked at, or -1 for live.
	cursor int
	// end is the newest state when the learner stepped into the past: the
	// position counts from it and ] returns to live there, however many
	// live states arrive meanwhile.
	end int
}

func newHistory(limit int) *history {
	if limit <= 0 {
		limit = DefaultHistory
	}
	return &history{limit: limit, cursor: -1}
}

// push adds the newest state.
func (h *history) push(v *view.State) {
	if n := len(h.states); n > 0 {
		share(h.states[n-1], v)
	}
	h.states = append(h.states, v)
	if len(h.states) > h.limit {
		drop := len(h.states) - h.limit
		clear(h.states[:drop])
		h.states = slices.Delete(h.states, 0, drop)
		h.first += drop
	}
	if h.cursor >= 0 && h.cursor < h.first {
		h.cursor = h.first
	}
}

func (h *history) last() int { return h.first + len(h.states) - 1 }

func (h *history) live() bool { return h.cursor < 0 }

// back steps one state into the past; false when there is none.
func (h *history) back() bool {
	if len(h.states) < 2 {
		return false
	}
	switch {
	case h.cursor < 0:
		h.end = h.last()
		h.cursor = h.end - 1
	case h.cursor > h.first:
		h.cursor--
	default:
		return false
	}
	return true
}

// forward steps towards the present; reaching it returns to live.
func (h *history) forward() {
	if h.cursor < 0 {
		return
	}
	h.cursor++
	if h.cursor >= h.end {
		h.cursor = -1
	}
}

func (h *history) toLive() { h.cursor = -1 }

// lastEvent is the newest timeline line of a state: what had just happened.
func lastEvent(v *view.State) view.TimelineLine {
	if len(v.Timeline) == 0 {
		return view.TimelineLine{}
	}
	return v.Timeline[len(v.Timeline)-1]
}

func (h *history) at(i int) *view.State { return h.states[i-h.first] }

// backEvent jumps to the moment the shown event happened (the first state
// where it is the newest), or if already there, to the one before it.
func (h *history) backEvent() bool {
	if len(h.states) < 2 {
		return false
	}
	cur, end := h.cursor, h.end
	if cur < 0 {
		cur, end = h.last(), h.last()
	}
	ev := lastEvent(h.at(cur))
	j := cur
	for j > h.first && lastEvent(h.at(j-1)) == ev {
		j--
	}
	if j == cur { // already at the start of this event: the previous one
		if j == h.first {
			return false
		}
		j--
		ev = lastEvent(h.at(j))
		for j > h.first && lastEvent(h.at(j-1)) == ev {
			j--
		}
	}
	if j == end {
		return false
	}
	h.cursor, h.end = j, end
	return true
}

// forwardEvent jumps to the moment of the next event, or back to live.
func (h *history) forwardEvent() {
	if h.cursor < 0 {
		return
	}
	ev := lastEvent(h.at(h.cursor))
	j := h.cursor
	for j < h.end && lastEvent(h.at(j)) == ev {
		j++
	}
	if j >= h.end {
		h.cursor = -1
		return
	}
	h.cursor = j
}

// current is the state under the cursor (nil when live or empty).
func (h *history) current() *view.State {
	if h.cursor < 0 || len(h.states) == 0 {
		return nil
	}
	return h.states[h.cursor-h.first]
}

// stepsBack is how far the cursor is from the newest state there was when
// the learner stepped back.
func (h *history) stepsBack() int {
	if h.cursor < 0 {
		return 0
	}
	return h.end - h.cursor
}

// share makes next reuse prev's slices where they are equal, so the ring
// keeps one copy of a log window that did not move.
func share(prev, next *view.State) {
	pp := make(map[string]*view.Partition, len(prev.Partitions))
	for i := range prev.Partitions {
		pp[prev.Partitions[i].Name] = &prev.Partitions[i]
	}
	for i := range next.Partitions {
		np := &next.Partitions[i]
		op := pp[np.Name]
		if op == nil {
			continue
		}
		for j := range np.Replicas {
			nr := &np.Replicas[j]
			for k := range op.Replicas {
				or := &op.Replicas[k]
				if or.Node == nr.Node && slices.EqualFunc(or.Entries, nr.Entries, sameEntry) {
					nr.Entries = or.Entries
					break
				}
			}
		}
	}
	for i := range next.Tables {
		if i < len(prev.Tables) && prev.Tables[i].Name == next.Tables[i].Name &&
			slices.EqualFunc(prev.Tables[i].Rows, next.Tables[i].Rows, slices.Equal[[]string]) {
			next.Tables[i].Rows = prev.Tables[i].Rows
		}
	}
	if slices.Equal(prev.Timeline, next.Timeline) {
		next.Timeline = prev.Timeline
	}
	// The lab samples its series a few times a second and the screen reads
	// it twenty times: most states carry the same values.
	for i := range next.Charts.Series {
		ns := &next.Charts.Series[i]
		if i < len(prev.Charts.Series) && prev.Charts.Series[i].Name == ns.Name && slices.Equal(prev.Charts.Series[i].Values, ns.Values) {
			ns.Values = prev.Charts.Series[i].Values
		}
	}
	for i := range next.Charts.Retries {
		nr := &next.Charts.Retries[i]
		if i < len(prev.Charts.Retries) && prev.Charts.Retries[i].Name == nr.Name && slices.Equal(prev.Charts.Retries[i].Times, nr.Times) {
			nr.Times = prev.Charts.Retries[i].Times
		}
	}
}

func sameEntry(a, b view.Entry) bool { return a == b }
