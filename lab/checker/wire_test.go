package checker

import (
	"strings"
	"testing"
)

// wire builds a wire group's history on orders/0: produces p-0… at
// offsets 0…, then fetches and commits in the order given.
type wire struct {
	h   History
	seq int
}

func newWire(n int, key string) *wire {
	w := &wire{}
	for i := range n {
		p := acked(id(i), "orders", 0, int64(i))
		p.Key = key
		w.h.Produces = append(w.h.Produces, p)
	}
	return w
}

func id(i int) string { return "p-" + string(rune('a'+i)) }

// fetch sends offsets from…to-1 to the group's member of generation gen.
func (w *wire) fetch(group string, gen int, from, to int64) *wire {
	for o := from; o < to; o++ {
		w.seq++
		w.h.Fetches = append(w.h.Fetches, Fetch{MsgID: id(int(o)), Client: "rdkafka", Conn: "n1 from 127.0.0.1:5000", Group: group,
			Generation: gen, Topic: "orders", Partition: 0, Offset: o, Key: "k", Seq: w.seq})
	}
	return w
}

func (w *wire) commit(group string, gen int, offset int64) *wire {
	w.seq++
	w.h.Commits = append(w.h.Commits, Commit{Client: "rdkafka", Group: group, Generation: gen, Topic: "orders", Partition: 0, Offset: offset, Seq: w.seq})
	return w
}

func (w *wire) check(t *testing.T, n int) Report {
	t.Helper()
	var ids []string
	for i := range n {
		ids = append(ids, id(i))
	}
	return Check(w.h, Observed{Logs: []Log{log("orders", 0, 0, ids...)}})
}

// A client that fetched records, dropped them at a leader change and
// fetched them again, then committed past them: re-fetches, not
// duplicates, and no order violation.
func TestWireRefetchIsNotADuplicate(t *testing.T) {
	w := newWire(5, "k").fetch("billing", 1, 0, 5).fetch("billing", 1, 2, 5).commit("billing", 1, 5)
	r := w.check(t, 5)
	if r.Fetched != 5 || r.Refetched != 3 || r.DuplicateDeliveries != 0 || r.OrderViolations != 0 {
		t.Fatalf("report %s; want fetched=5 refetched=3 and no duplicate or order violation", r.Summary())
	}
	fs, n := r.Explain("refetched")
	// One fetch of three records: one run, naming the three.
	if listed := Listed(fs); listed != 3 {
		t.Errorf("a run of 3 lists %d records", listed)
	}
	if n != 3 || len(fs) != 1 || fs[0].Offset != 2 || fs[0].Last != 4 || !strings.Contains(fs[0].String(), "orders/0 offsets 2 to 4, 3 records, (group billing") ||
		!strings.Contains(fs[0].String(), "not a redelivery") {
		t.Errorf("why refetched: %v behind %d", fs, n)
	}
	if fs, _ := r.Explain("fetched"); len(fs) != 1 || !strings.Contains(fs[0].String(), "5 records sent") {
		t.Errorf("why fetched: %v", fs)
	}
}

// What the commits prove is a redelivery.
func TestWireCommitsProveRedeliveries(t *testing.T) {
	for _, c := range []struct {
		name string
		w    *wire
		dups int
		why  string
	}{
		{"the commit moved back, and the records were fetched again",
			newWire(5, "k").fetch("g", 1, 0, 5).commit("g", 1, 5).commit("g", 1, 2).fetch("g", 1, 2, 5), 3, "commit moved back from 5 to 2"},
		{"committed past, then fetched again by a later generation",
			newWire(5, "k").fetch("g", 1, 0, 5).commit("g", 1, 4).fetch("g", 2, 3, 5), 1, "generation 1 committed past it (offset 4), and generation 2 fetched it again"},
		{"committed past, then fetched again by the same generation",
			newWire(5, "k").fetch("g", 1, 0, 5).commit("g", 1, 4).fetch("g", 1, 3, 5), 0, ""},
		{"committed twice by two generations, the commit moving back between",
			newWire(5, "k").fetch("g", 1, 0, 5).commit("g", 1, 5).commit("g", 2, 3).commit("g", 2, 5), 2, "committed past twice: by generation 1 (offset 5)"},
		{"committed again by a later generation without moving back",
			newWire(5, "k").fetch("g", 1, 0, 5).commit("g", 1, 5).commit("g", 2, 5), 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.w.check(t, 5)
			if r.DuplicateDeliveries != c.dups || r.OrderViolations != 0 || r.Fetched != 5 {
				t.Fatalf("report %s; want duplicate_deliveries=%d fetched=5, no order violation", r.Summary(), c.dups)
			}
			fs, _ := r.Explain("duplicate_deliveries")
			n := 0
			for _, f := range fs {
				n += int(max(f.Last, f.Offset) - f.Offset + 1)
			}
			if c.dups > 0 && (n != c.dups || !strings.Contains(fs[0].Explained, c.why)) {
				t.Errorf("why duplicate_deliveries: %v; want %d records saying %q", fs, c.dups, c.why)
			}
		})
	}
}

// Order is measured on what the group committed past: a log that holds a
// key's records out of the order they were written is an order
// violation when the group commits past them, and says which.
func TestWireOrderIsWhatTheCommitsMarkDone(t *testing.T) {
	w := newWire(3, "k")
	w.h.Produces[0].Offset, w.h.Produces[1].Offset = 1, 0 // p-a written first, but at offset 1
	w.seq++
	for _, o := range []int64{0, 1, 2} {
		msg := map[int64]string{0: "p-b", 1: "p-a", 2: "p-c"}[o]
		w.seq++
		w.h.Fetches = append(w.h.Fetches, Fetch{MsgID: msg, Client: "rdkafka", Group: "g", Generation: 1, Topic: "orders", Offset: o, Key: "k", Seq: w.seq})
	}
	// Fetched out of order and again: still nothing until a commit.
	w.fetch("g", 1, 0, 1)
	r := Check(w.h, Observed{Logs: []Log{log("orders", 0, 0, "p-b", "p-a", "p-c")}})
	if r.OrderViolations != 0 || r.Refetched != 1 {
		t.Fatalf("before a commit: %s; want no order violation, one re-fetch", r.Summary())
	}
	w.commit("g", 1, 3)
	r = Check(w.h, Observed{Logs: []Log{log("orders", 0, 0, "p-b", "p-a", "p-c")}})
	if r.OrderViolations != 1 || r.DuplicateDeliveries != 0 {
		t.Fatalf("after the commit: %s; want one order violation", r.Summary())
	}
	fs, _ := r.Explain("order_violations")
	if len(fs) != 1 || fs[0].MsgID != "p-a" || !strings.Contains(fs[0].Explained, "committed past after p-b") {
		t.Errorf("why order_violations: %v", fs)
	}
}

// A fetch the broker could not tie to one group counts in none, and the
// report says which client.id to set.
func TestWireAmbiguousFetch(t *testing.T) {
	w := newWire(3, "k").fetch("a", 1, 0, 3)
	for o := range int64(3) {
		w.seq++
		w.h.Fetches = append(w.h.Fetches, Fetch{MsgID: id(int(o)), Client: "rdkafka", Groups: []string{"a", "b"}, Topic: "orders", Offset: o, Seq: w.seq})
	}
	r := w.check(t, 3)
	if r.Fetched != 3 || r.Refetched != 0 || r.DuplicateDeliveries != 0 || len(r.Ambiguous) != 1 || r.Ambiguous[0].Records != 3 {
		t.Fatalf("report %s, ambiguous %+v; want group a's 3 fetches and 3 ambiguous", r.Summary(), r.Ambiguous)
	}
	if h := r.Ambiguous[0].Hint(); !strings.Contains(h, "could be for group a or b") || !strings.Contains(h, "client.id") {
		t.Errorf("hint %q", h)
	}
}

// A commit far past the log's end (a client's bad offset) covers the
// records there are, and no more.
func TestWireCommitPastTheEnd(t *testing.T) {
	w := newWire(3, "k").fetch("g", 1, 0, 3).commit("g", 1, 1<<62).commit("g", 1, 2).fetch("g", 1, 2, 3)
	r := w.check(t, 3)
	if r.Fetched != 3 || r.DuplicateDeliveries != 1 || r.OrderViolations != 0 {
		t.Fatalf("report %s; want fetched=3, one redelivery after the commit moved back", r.Summary())
	}
}

// A seek the learner asked for moves the group back: what its members
// fetch again is a replay, even under a new generation.
func TestWireSeekIsAReplay(t *testing.T) {
	w := newWire(5, "k").fetch("g", 1, 0, 5).commit("g", 1, 5)
	w.seq++
	w.h.Commits = append(w.h.Commits, Commit{Group: "g", Generation: -1, Topic: "orders", Offset: 2, Seek: true, Seq: w.seq})
	w.fetch("g", 2, 2, 5).commit("g", 2, 5)
	r := w.check(t, 5)
	if r.DuplicateDeliveries != 0 || r.Refetched != 3 || r.OrderViolations != 0 {
		t.Fatalf("report %s; want the 3 records after the seek as re-fetches, no duplicate", r.Summary())
	}
	if fs, _ := r.Explain("refetched"); len(fs) != 1 || fs[0].Last != 4 || !strings.Contains(fs[0].Explained, "asked for by a seek") {
		t.Errorf("why refetched: %v", fs)
	}
}
