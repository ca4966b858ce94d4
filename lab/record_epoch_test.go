package lab

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// epoch(P@n1, OFFSET) reads the epoch of one record as one replica holds
// it, so a returning leader's cut tail can be told from the records that
// replaced it: the same offset, a different epoch.
func TestRecordEpochTellsDivergentReplicasApart(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l,
		"cluster nodes=3",
		"topic create orders partitions=1",
		"elect n1 orders/0",
		"produce orders key=881 count=4 acks=all",
		"partition n1 | n2,n3",
		"produce orders key=881 count=2 acks=1 as=fast",
		"wait leader(orders/0) != n1",
		"wait leader(orders/0) != none",
		"produce orders key=881 count=3 acks=all as=late",
	)
	epochAt := func(ref string) float64 { t.Helper(); return numberOf(t, l, ref) }
	old, cut := epochAt("epoch(orders/0@n1, 0)"), epochAt("epoch(orders/0@n1, 4)")
	if old != cut {
		t.Errorf("n1 wrote offsets 0 and 4 as leader of one epoch: %v and %v", old, cut)
	}
	leader := epochAt("epoch(orders/0)")
	if got := epochAt("epoch(orders/0, 4)"); got != leader {
		t.Errorf("the new leader wrote offset 4 under its epoch %v, not %v", leader, got)
	}
	if got := epochAt("epoch(orders/0@n2, 0)"); got != old {
		t.Errorf("offset 0 is committed and the same on n2: epoch %v, want %v", got, old)
	}
	if cut >= leader {
		t.Errorf("n1's uncommitted offset 4 carries epoch %v, the new leader's %v: want it older", cut, leader)
	}
	// n1 holds offsets 0 to 5; nothing at 6 until it has caught up.
	_, err := l.Exec(ctxFor(t, 10*time.Second), "expect epoch(orders/0@n1, 6) >= 0")
	var ee *ExpectationError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "holds no record at offset 6; its log holds offsets 0 to 5") {
		t.Errorf("an offset past n1's log end: %v", err)
	}

	mustRun(t, l,
		"heal",
		"wait hwm(orders/0@n1) == hwm(orders/0)",
		"expect leo(orders/0@n1) == 7",
	)
	if got := epochAt("epoch(orders/0@n1, 4)"); got != leader {
		t.Errorf("after the heal n1 holds the leader's offset 4, epoch %v; it reads %v", leader, got)
	}
	if got := epochAt("epoch(orders/0@n1, 6)"); got != leader {
		t.Errorf("n1 copied offset 6 from the leader: epoch %v, want %v", got, leader)
	}
}

// held_back(P@n1) counts the reads a leader answered while it held
// records above its high-water mark: a consumer that goes on fetching
// from a leader cut off from its followers is kept below the mark, and
// the count shows it asked there.
func TestHeldBackCountsReadsBelowTheMark(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l,
		"cluster nodes=3",
		"topic create orders partitions=1",
		"elect n1 orders/0",
		"produce orders key=881 count=4 acks=all",
		"consumer start audit-1 group=audit topic=orders",
		"wait lag(audit) == 0",
	)
	read := func(ref string) float64 { t.Helper(); return numberOf(t, l, ref) }
	before := read("held_back(orders/0@n1)")
	mustRun(t, l,
		"partition n1 | n2,n3",
		"produce orders key=882 count=3 batch=3 acks=1 as=fast",
		"wait leo(orders/0@n1) == 7",
	)
	waitFor(t, 10*time.Second, "audit-1 to fetch from n1 while it holds offsets 4 to 6 uncommitted", func() bool {
		return read("held_back(orders/0@n1)") > before
	})
	mustRun(t, l, "expect delivered(audit) == 4", "expect hwm(orders/0@n1) == 4")
	if got := read("held_back(orders/0@n2)"); got != 0 {
		t.Errorf("n2, a follower that never led, answered %v reads", got)
	}
}

// numberOf reads a numeric lab value, such as epoch(orders/0@n1, 4), as
// an expect shows it: "epoch(orders/0@n1, 4) is 3".
func numberOf(t *testing.T, l *Lab, ref string) float64 {
	t.Helper()
	res, err := l.Exec(ctxFor(t, 10*time.Second), "expect "+ref+" >= 0")
	if err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	_, num, ok := strings.Cut(res.Observed, " is ")
	f, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil {
		t.Fatalf("%s: observed %q", ref, res.Observed)
	}
	return f
}
