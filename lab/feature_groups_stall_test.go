package lab

import (
	"strings"
	"testing"
	"time"
)

// A stall shorter than the session leaves the member in its group; one
// that outlasts it gets the member dropped, and the member joins again
// once it goes on. The stall is counted in lab time.
func TestStallAgainstTheSession(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l,
		"topic create orders partitions=2",
		"consumer start keep-1 group=keep topic=orders",
		"consumer start keep-2 group=keep topic=orders session=2s",
		"consumer start drop-1 group=drop topic=orders",
		"consumer start drop-2 group=drop topic=orders session=400ms",
		"wait members(keep) == 2",
		"wait members(drop) == 2",
		"stall keep-2 for=1s",
		"stall drop-2 for=1s",
		"pause in=900ms",
		"expect members(keep) == 2", // 0.9 s of silence is within keep-2's 2 s
		"expect members(drop) == 1", // and past drop-2's 0.4 s
		"resume",
		"wait members(drop) == 2", // drop-2 goes on and joins again
	)
	if !timelineHas(l, EventClient, "drop-2 goes on after its 1s stall") {
		t.Errorf("the timeline does not say drop-2 went on")
	}
	for _, tc := range []struct{ line, want string }{
		{"stall nobody for=1s", `no consumer named "nobody"`},
		{"stall keep-1 for=0s", "above zero"},
	} {
		if _, err := l.Exec(ctxFor(t, 10*time.Second), tc.line); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want it to say %q", tc.line, err, tc.want)
		}
	}
	mustRun(t, l, "consumer stop keep-1")
	if _, err := l.Exec(ctxFor(t, 10*time.Second), "stall keep-1 for=1s"); err == nil || !strings.Contains(err.Error(), "only a running consumer can stall") {
		t.Errorf("stall of a stopped consumer: %v", err)
	}
}

// generation(G) moves at every rebalance and stays put while the members
// keep their session: a member dropped and rejoined between two readings
// shows there, though members(G) reads the same before and after.
func TestGenerationCountsRebalances(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l,
		"topic create orders partitions=2",
		"consumer start g-1 group=g topic=orders",
		"consumer start g-2 group=g topic=orders session=400ms",
		"wait members(g) == 2", "wait idle(g) == 0")
	joined := labNumber(t, l, "generation(g)")
	mustRun(t, l, "stall g-2 for=200ms", "pause in=300ms", "resume")
	if got := labNumber(t, l, "generation(g)"); got != joined {
		t.Errorf("generation %v after a stall within the session, %v before; want no rebalance", got, joined)
	}
	mustRun(t, l, "stall g-2 for=1s", "pause in=1100ms", "resume", "wait members(g) == 2", "wait idle(g) == 0")
	if got := labNumber(t, l, "generation(g)"); got < joined+2 {
		t.Errorf("generation %v after g-2 was dropped and joined again, %v before; want two rebalances more", got, joined)
	}
	if _, err := l.Exec(ctxFor(t, 5*time.Second), "expect generation(nogroup) == 0"); err == nil {
		t.Errorf("generation(nogroup) read a number")
	}
}
