package lab

import (
	"strings"
	"testing"

	"github.com/mqlab/mqlab/broker"
)

// A lab slowed below real time slows raft with it, so an election lasts
// in lab time what the timing preset says; faster, raft keeps its preset.
func TestSpeedSlowsRaft(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	for _, c := range []struct {
		line string
		pace float64
	}{{"speed 0.25x", 4}, {"speed 0.1x", 10}, {"speed 2x", 1}, {"speed 0.5x", 2}, {"speed 1x", 1}} {
		res := mustRun(t, l, c.line)
		w, _ := l.world()
		if got := w.cluster.RaftPace(); got != c.pace {
			t.Errorf("%s: raft's pace is %v; want %v (%q)", c.line, got, c.pace, res[0].Lines)
		}
	}
}

// Hurry puts raft on the fast preset's timeouts for a classroom lab, on
// the cluster it has and on one the cluster command starts meanwhile,
// whatever the speed asks; off gives the speed's pace back.
func TestHurry(t *testing.T) {
	t.Parallel()
	l, err := New(Options{Timing: "classroom"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	pace := func() float64 {
		w, _ := l.world()
		return w.cluster.RaftPace()
	}
	if err := l.Hurry(true); err != nil {
		t.Fatal(err)
	}
	hurried := float64(broker.FastTiming.HeartbeatTimeout) / float64(broker.ClassroomTiming.HeartbeatTimeout)
	if got := pace(); got != hurried {
		t.Errorf("hurried: raft's pace is %v; want %v, the fast preset's timeouts", got, hurried)
	}
	mustRun(t, l, "cluster nodes=3", "speed 0.5x")
	if got := pace(); got != hurried {
		t.Errorf("a cluster started while hurried, at 0.5x: raft's pace is %v; want %v", got, hurried)
	}
	// A consumer started while hurried gets the fast preset's session, so
	// a replayed crash is not waited out for the classroom's 10 s.
	mustRun(t, l, "topic create t partitions=1", "consumer start c1 group=g topic=t crash=before-work",
		"produce t", "wait state(c1) == crashed")
	found := false
	for _, e := range l.Snapshot().Timeline {
		found = found || strings.Contains(e.Text, "drops c1 once its session of 1s runs out")
	}
	if !found {
		t.Error("no crash event names a session of 1s for a consumer started while hurried")
	}
	if err := l.Hurry(false); err != nil {
		t.Fatal(err)
	}
	if got := pace(); got != 2 {
		t.Errorf("no longer hurried, at 0.5x: raft's pace is %v; want 2", got)
	}
}
