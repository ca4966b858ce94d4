package source

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/tui/internal/labtest"
	"github.com/mqlab/mqlab/tui/view"
)

// newTestLab starts a fast lab, runs lines on it, and watches it with a
// LabSource; both are closed when the test ends.
func newTestLab(t testing.TB, lines ...string) (*lab.Lab, *LabSource) {
	t.Helper()
	l := labtest.NewLab(t)
	src := NewLabSource(l)
	t.Cleanup(src.Close)
	for _, line := range lines {
		mustExec(t, src, line)
	}
	return l, src
}

func mustExec(t testing.TB, src view.Source, line string) string {
	t.Helper()
	return labtest.MustExec(t, src, order(line))
}

// order is the order the screen's prompt makes of a typed line.
func order(line string) view.Order {
	cmd, err := command.Parse(line)
	return view.Order{Line: line, Cmd: cmd, Err: err}
}

var (
	checkLeaks  = labtest.CheckLeaks
	eventually  = labtest.Eventually
	partitionOf = labtest.PartitionOf
	nodeOf      = labtest.NodeOf
)

func TestLabSourceMapsCluster(t *testing.T) {
	checkLeaks(t)
	_, src := newTestLab(t, "topic create orders partitions=3", "elect n1 orders/0", "elect n2 orders/1")
	out := mustExec(t, src, "produce orders count=6 acks=all")
	if !strings.Contains(out, "acknowledged") {
		t.Errorf("produce said %q", out)
	}

	// Fast timing elects within a second, and a busy machine can
	// make a leader step down between two looks: wait for a settled view.
	v := eventually(t, src, "every replica to hold its 2 messages, committed, under a leader", func(v view.State) bool {
		for _, p := range v.Partitions {
			if p.Leader == "" {
				return false
			}
			for _, r := range p.Replicas {
				if r.HWM != 2 || r.LEO != 2 {
					return false
				}
			}
		}
		return len(v.Partitions) == 3
	})
	if v.Timing != "fast" || v.Time.IsZero() || v.Clock.Speed != 1 || v.Clock.Paused {
		t.Errorf("timing %q, time %v, clock %+v", v.Timing, v.Time, v.Clock)
	}
	if len(v.Nodes) != 3 {
		t.Fatalf("nodes %+v", v.Nodes)
	}
	var names []string
	for _, p := range v.Partitions {
		names = append(names, p.Name)
		if n := nodeOf(v, p.Leader); n == nil || !n.Up || !slices.Contains(n.Leads, p.Name) {
			t.Errorf("%s is led by %s, which says it leads %v", p.Name, p.Leader, n)
		}
	}
	if !slices.Equal(names, []string{"orders/0", "orders/1", "orders/2"}) {
		t.Errorf("partitions %q: want orders only, internal topics hidden", names)
	}
	for _, n := range v.Nodes {
		for _, g := range n.Leads {
			if strings.HasPrefix(g, "__") {
				t.Errorf("%s leads %s: internal groups are hidden", n.ID, g)
			}
		}
	}
	p := partitionOf(v, "orders/0")
	if p.Epoch == 0 || len(p.Replicas) != 3 {
		t.Fatalf("orders/0 = %+v", p)
	}
	for _, r := range p.Replicas {
		wantRole := "follower"
		if r.Node == p.Leader {
			wantRole = "leader"
		}
		if r.Role != wantRole || r.Epoch != p.Epoch || r.LogStart != 0 {
			t.Errorf("replica %+v: want %s at epoch %d", r, wantRole, p.Epoch)
		}
		if len(r.Entries) != 2 || r.Entries[1].Offset != r.LEO-1 || !r.Entries[1].Committed || r.Entries[0].Epoch == 0 {
			t.Errorf("replica %s entries %+v: want a window ending at LEO %d", r.Node, r.Entries, r.LEO)
		}
	}

	// The timeline: oldest first, the commands in it, no append noise.
	if len(v.Timeline) == 0 || len(v.Timeline) > timelineSize {
		t.Fatalf("timeline has %d lines", len(v.Timeline))
	}
	kinds := map[string]bool{}
	for i, l := range v.Timeline {
		kinds[l.Kind] = true
		if i > 0 && l.Time.Before(v.Timeline[i-1].Time) {
			t.Errorf("timeline goes back in time at %d: %v after %v", i, l.Time, v.Timeline[i-1].Time)
		}
	}
	for _, k := range []string{"command", "outcome", "leader-elected", "topic-created"} {
		if !kinds[k] {
			t.Errorf("no %q line in the timeline: %v", k, kinds)
		}
	}
	if kinds["append"] || kinds["commit"] {
		t.Errorf("detail events in the timeline: %v", kinds)
	}
	if len(v.Checker.Fields) != 0 || len(v.Jobs) != 0 {
		t.Errorf("checker %+v, jobs %+v before any check or load", v.Checker, v.Jobs)
	}

	// The state is a copy: the history may keep it while the lab moves on.
	v.Partitions[0].Replicas[0].Entries[0].Epoch = 999
	if w := src.View(); w.Partitions[0].Replicas[0].Entries[0].Epoch == 999 {
		t.Error("two views share memory")
	}
}

func TestLabSourceFaultsAndClock(t *testing.T) {
	checkLeaks(t)
	_, src := newTestLab(t, "topic create orders partitions=1", "elect n1 orders/0")

	mustExec(t, src, "partition n1 | n2,n3")
	v := src.View()
	if n1 := nodeOf(v, "n1"); !slices.Equal(n1.CutFrom, []string{"n2", "n3"}) || n1.Isolated {
		t.Errorf("n1 after a partition: %+v", n1)
	}
	if n2 := nodeOf(v, "n2"); !slices.Equal(n2.CutFrom, []string{"n1"}) {
		t.Errorf("n2 after a partition: %+v", n2)
	}
	mustExec(t, src, "heal")
	mustExec(t, src, "isolate n3")
	mustExec(t, src, "slow n2 200ms")
	v = src.View()
	if n3 := nodeOf(v, "n3"); !n3.Isolated || len(n3.CutFrom) != 0 {
		t.Errorf("isolated n3: %+v", n3)
	}
	if n1 := nodeOf(v, "n1"); len(n1.CutFrom) != 0 {
		t.Errorf("n1 is not cut from an isolated node, it is the node that is isolated: %+v", n1)
	}
	if n2 := nodeOf(v, "n2"); n2.Latency != 200*time.Millisecond {
		t.Errorf("slow n2: %+v", n2)
	}
	mustExec(t, src, "heal")

	mustExec(t, src, "speed 2x")
	if c := src.View().Clock; c.Speed != 2 || c.Paused {
		t.Errorf("clock after speed 2x: %+v", c)
	}
	mustExec(t, src, "pause")
	if c := src.View().Clock; !c.Paused {
		t.Errorf("clock after pause: %+v", c)
	}
	mustExec(t, src, "resume")

	// A running load is a job with progress; a stopped one is not.
	mustExec(t, src, "load orders rate=20/s for=60s")
	v = src.View()
	if len(v.Jobs) != 1 || v.Jobs[0].Name != "load orders" || v.Jobs[0].Total != 1200 {
		t.Errorf("jobs while loading: %+v", v.Jobs)
	}
	eventually(t, src, "the load to make progress", func(v view.State) bool { return len(v.Jobs) == 1 && v.Jobs[0].Done > 0 })
	mustExec(t, src, "load stop")
	eventually(t, src, "the load to stop", func(v view.State) bool { return len(v.Jobs) == 0 })

	// Kill the leader: the partition names who leads now, one epoch up,
	// and the dead replica is down.
	v = eventually(t, src, "a leader of orders/0", func(v view.State) bool { return partitionOf(v, "orders/0").Leader != "" })
	leader, before := partitionOf(v, "orders/0").Leader, partitionOf(v, "orders/0").Epoch
	mustExec(t, src, "kill "+leader)
	v = eventually(t, src, "a new leader of orders/0", func(v view.State) bool {
		p := partitionOf(v, "orders/0")
		return p.Leader != "" && p.Leader != leader && p.Epoch > before
	})
	if n := nodeOf(v, leader); n.Up || len(n.Leads) != 0 {
		t.Errorf("killed %s: %+v", leader, n)
	}
	for _, r := range partitionOf(v, "orders/0").Replicas {
		if r.Node == leader && r.Role != "down" {
			t.Errorf("killed %s's replica is %q", leader, r.Role)
		}
	}
}

// A script that loses an acks=1 write: the returning replica's cut tail is
// a dated truncation, and the check's lost message comes with a note.
func TestLabSourceTruncationAndChecker(t *testing.T) {
	checkLeaks(t)
	l, src := newTestLab(t)
	b, err := os.ReadFile("../../lab/testdata/acks1-loses-on-failover.mqlab")
	if err != nil {
		t.Fatal(err)
	}
	lines, err := command.ParseScript(string(b))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if failed := l.RunScript(ctx, lines, nil); len(failed) > 0 {
		t.Fatalf("the script failed: %v", lab.ScriptError(failed))
	}
	mustExec(t, src, "check")
	v := src.View()
	var tr *view.Truncation
	for _, r := range partitionOf(v, "orders/0").Replicas {
		if r.Node == "n1" {
			tr = r.Truncation
		}
	}
	if tr == nil || tr.From != 1 || tr.To != 2 || len(tr.Epochs) != 1 || tr.At.IsZero() {
		t.Fatalf("n1's truncation = %+v, want offset 1 cut, dated", tr)
	}
	if v.Checker.At.IsZero() || len(v.Checker.Fields) == 0 {
		t.Fatalf("checker %+v", v.Checker)
	}
	byName := map[string]view.CheckField{}
	for _, f := range v.Checker.Fields {
		byName[f.Name] = f
	}
	if f := byName["lost"]; f.Value != 1 || f.OK || len(f.Why) != 1 || !strings.Contains(f.Why[0], "orders/0 offset 1") {
		t.Errorf("lost = %+v, want 1 ✗ and the record behind it", f)
	}
	if f := byName["confirmed"]; f.Value != 2 || !f.OK {
		t.Errorf("confirmed = %+v", f)
	}
	if f := byName["unknown"]; f.Value != 0 || !f.OK {
		t.Errorf("unknown = %+v", f)
	}
}

func TestLabSourceChanges(t *testing.T) {
	checkLeaks(t)
	l, err := lab.New(lab.Options{Nodes: 3, Timing: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	src := NewLabSource(l)
	// Signals come, coalesced, whether or not anything happens.
	for range 3 {
		select {
		case <-src.Changes():
		case <-time.After(5 * time.Second):
			t.Fatal("no change signalled")
		}
	}
	src.Close()
	src.Close() // twice is fine
	deadline := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-src.Changes():
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("Changes is not closed after Close")
		}
	}
}

// A recording opens paused at its start, steps one event at a time,
// plays frame by frame to its end, paces with pause, resume and speed,
// and refuses everything else.
func TestReplay(t *testing.T) {
	checkLeaks(t)
	l, src := newTestLab(t)
	var rec bytes.Buffer
	r := lab.NewRecorder(l, &rec)
	for _, line := range []string{"topic create orders partitions=1", "elect n1 orders/0", "produce orders count=3 acks=all", "kill n1"} {
		mustExec(t, src, line)
	}
	eventually(t, src, "a new leader", func(v view.State) bool {
		p := partitionOf(v, "orders/0")
		return p.Leader != "" && p.Leader != "n1"
	})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	rp, err := NewReplay(bytes.NewReader(rec.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	if rp.Frames() < 2 {
		t.Fatalf("%d frames", rp.Frames())
	}
	first := rp.View()
	if len(first.Jobs) != 1 || first.Jobs[0].Name != "replay" || !first.Clock.Paused {
		t.Errorf("the replay opens on %+v, clock %+v; want its first frame, paused", first.Jobs, first.Clock)
	}
	// One event at a time, forward and back, from the start.
	start := first.Jobs[0].Done
	mustExec(t, rp, CmdStepForward)
	if second := rp.View(); second.Jobs[0].Done != start+1 || len(second.Timeline) != len(first.Timeline)+1 {
		t.Errorf("step forward showed %d events (%d lines), from %d (%d)", second.Jobs[0].Done, len(second.Timeline), start, len(first.Timeline))
	}
	mustExec(t, rp, CmdStepBack)
	if back := rp.View(); back.Jobs[0].Done != start {
		t.Errorf("step back showed %d events; want %d", back.Jobs[0].Done, start)
	}
	for range start {
		mustExec(t, rp, CmdStepBack)
	}
	if out, _ := rp.Exec(context.Background(), order(CmdStepBack)); !strings.Contains(out, "the start of the recording") {
		t.Errorf("a step back at the start said %q", out)
	}
	if _, err := rp.Exec(context.Background(), order("kill n2")); err == nil || !strings.Contains(err.Error(), "cannot be changed") {
		t.Errorf("kill on a recording: %v", err)
	}
	mustExec(t, rp, "speed 100x")
	mustExec(t, rp, "resume")
	if c := rp.View().Clock; c.Speed != 100 || c.Paused {
		t.Errorf("clock after speed: %+v", c)
	}
	last := eventually(t, rp, "the end of the recording", func(v view.State) bool {
		return v.Jobs[0].Name == "replay ended"
	})
	if last.Jobs[0].Done != int64(rp.Events()) {
		t.Errorf("last frame %+v of %d", last.Jobs[0], rp.Frames())
	}
	if p := partitionOf(last, "orders/0"); p == nil || p.Leader == "" || p.Leader == "n1" {
		t.Errorf("the last frame's orders/0: %+v", p)
	}
	if len(last.Timeline) == 0 || !slices.ContainsFunc(last.Timeline, func(l view.TimelineLine) bool { return l.Kind == "node-killed" }) {
		t.Errorf("the last frame's timeline misses the kill: %+v", last.Timeline)
	}
	if _, err := rp.Exec(context.Background(), order("resume")); err == nil {
		t.Error("resume at the end of the recording said nothing")
	}
	mustExec(t, rp, "pause")
	if !rp.View().Clock.Paused {
		t.Error("pause did not pause")
	}

	if _, err := NewReplay(strings.NewReader("")); err == nil {
		t.Error("an empty recording opened")
	}
	if _, err := NewReplay(strings.NewReader("{not json")); err == nil {
		t.Error("a broken recording opened")
	}
}

// A follower back from a restart holds committed entries before it hears
// the leader's high-water mark: they are marked as learning, not as "not
// yet on a majority". A divergent tail of another epoch is not.
func TestMarkLearning(t *testing.T) {
	entries := func(epoch uint64, from, to, committedTo int64) []view.Entry {
		var es []view.Entry
		for o := from; o < to; o++ {
			es = append(es, view.Entry{Offset: o, Epoch: epoch, Committed: o < committedTo})
		}
		return es
	}
	p := view.Partition{Name: "orders/0", Replicas: []view.Replica{
		{Node: "n2", Role: "leader", HWM: 10, LEO: 10, Entries: entries(2, 0, 10, 10)},
		{Node: "n3", Role: "follower", HWM: 0, LEO: 10, Entries: entries(2, 0, 10, 0)},
		{Node: "n1", Role: "follower", HWM: 8, LEO: 10, Entries: append(entries(2, 0, 8, 8), entries(1, 8, 10, 0)...)},
	}}
	markLearning(&p)
	for _, e := range p.Replicas[1].Entries {
		if !e.Learning {
			t.Errorf("n3's committed entry %d is not marked as learning", e.Offset)
		}
	}
	for _, e := range p.Replicas[2].Entries[8:] {
		if e.Learning {
			t.Errorf("n1's divergent entry %d (epoch %d) is marked as committed", e.Offset, e.Epoch)
		}
	}
}
