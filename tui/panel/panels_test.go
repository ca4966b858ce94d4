package panel

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/keys"
	"github.com/mqlab/mqlab/tui/view"
)

// panelFixture is a context showing the failover scenario's state.
func panelFixture(t *testing.T) *Context {
	t.Helper()
	v := sceneEnd(t)
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &v
	return ctx
}

func TestPanelGoldens(t *testing.T) {
	ctx := panelFixture(t)
	cases := []struct {
		name string
		p    Component
		w, h int
	}{
		{"cluster", NewCluster(ctx), 78, 19},
		{"cluster", NewCluster(ctx), 118, 24},
		{"cluster", NewCluster(ctx), 60, 12},
		{"groups", NewGroups(ctx), 60, 10},
		{"groups", NewGroups(ctx), 44, 12},
		{"queues", NewQueues(ctx), 70, 8},
		{"services", NewServices(ctx), 60, 18},
		{"timeline", NewTimeline(ctx), 80, 12},
		{"timeline", NewTimeline(ctx), 36, 12},
		{"checker", NewChecker(ctx), 40, 10},
		{"checker", NewChecker(ctx), 28, 12},
		{"chart", NewChart(ctx), 60, 16},
		{"chart", NewChart(ctx), 60, 6},
		{"lesson", NewLesson(ctx), 40, 20},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s_%dx%d", c.name, c.w, c.h)
		t.Run(name, func(t *testing.T) {
			c.p.SetSize(c.w, c.h)
			got := c.p.View()
			checkSize(t, name, got, c.w, c.h)
			golden(t, name, got)
		})
	}
}

// Every panel says something useful when there is nothing to show.
func TestPanelsEmpty(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	var b strings.Builder
	for _, p := range []Component{NewLesson(ctx), NewCluster(ctx), NewGroups(ctx), NewQueues(ctx),
		NewServices(ctx), NewTimeline(ctx), NewChecker(ctx), NewChart(ctx)} {
		p.SetSize(50, 4)
		v := p.View()
		checkSize(t, p.Title(), v, 50, 4)
		fmt.Fprintf(&b, "== %s\n%s\n", p.Title(), v)
	}
	golden(t, "empty_50x4", b.String())
}

// The strip lines the replicas up on one offset axis and marks the
// committed part, the high-water mark and the truncation in words.
func TestClusterStrip(t *testing.T) {
	draw := func(v view.State) string {
		ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
		ctx.State = &v
		p := NewCluster(ctx)
		p.SetSize(100, 20)
		return p.View()
	}
	// While n1 is cut off it holds a write of its old epoch that no
	// majority has; the new leader writes at the next epoch.
	cut := sceneView(t, sceneFrame(t, "command", "kill n1")-1)
	old := cut.Partitions[0].Replicas[0]
	if old.Node != "n1" || old.LEO <= old.HWM {
		t.Fatalf("the scene's n1 holds nothing uncommitted before the kill: %+v", old)
	}
	v := draw(cut)
	for _, want := range []string{
		fmt.Sprintf("|○%d", old.Epoch),              // the hwm marker, then the uncommitted entry
		fmt.Sprintf("●%d", cut.Partitions[0].Epoch), // committed at the new epoch
	} {
		if !strings.Contains(v, want) {
			t.Errorf("cluster panel lacks %q:\n%s", want, v)
		}
	}
	end := sceneEnd(t)
	p0 := end.Partitions[0]
	v = draw(end)
	for _, want := range []string{
		fmt.Sprintf("orders/0  leader ▲ %s  epoch %d", p0.Leader, p0.Epoch), // who leads now, and at what epoch, in words
		"✂ n1 truncated:", // the cut, in words
		"never committed",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("cluster panel lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "✗ down") {
		t.Errorf("n1 is back up, but the panel says a node is down:\n%s", v)
	}
}

// Only the window is drawn: a million-offset log costs what its window
// costs, and offsets line up with the ruler.
func TestClusterBigLog(t *testing.T) {
	v := bigState(256)
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &v
	p := NewCluster(ctx)
	p.SetSize(130, 50)
	out := p.View()
	checkSize(t, "cluster big", out, 130, 50)
	if !strings.Contains(out, "hwm 999997 leo 1000000") {
		t.Errorf("numbers missing:\n%s", out)
	}
	if !strings.Contains(out, "partitions 1–") {
		t.Errorf("no hint that more partitions are below:\n%s", out)
	}
	p.Scroll(100)
	out = p.View()
	if !strings.Contains(out, "orders/11") {
		t.Errorf("scrolling does not reach the last partition:\n%s", out)
	}
}

func TestLessonPrediction(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	task := view.Task{Text: "Kill the leader", Hint: "press k", Done: true}
	pred := view.Prediction{Question: "Which epoch?", Choices: []string{"7", "8", "9"}, Chosen: 2, Answer: 1}
	exps := []view.Expectation{{Text: "lost == 0", Checked: true, OK: false, Got: "3"}, {Text: "epoch(orders/0) == 8"}}
	v := view.State{Lesson: &view.Lesson{Title: "Failover", Step: 2, Steps: 4, StepTitle: "Kill the leader", Status: lessons.StatusFailed,
		Blocks: []view.LessonBlock{{Kind: view.BlockText, Text: "The leader dies."}, {Kind: view.BlockTask, Task: &task},
			{Kind: view.BlockPrediction, Prediction: &pred}, {Kind: view.BlockExpect, Expectations: exps}},
		Tasks: []view.Task{task}, Prediction: &pred, Expectations: exps}}
	ctx.State = &v
	p := NewLesson(ctx)
	p.SetSize(40, 22)
	golden(t, "lesson_answered_40x22", p.View())
}

// The precomputed escape codes draw exactly what lipgloss draws.
func TestStyleFastPath(t *testing.T) {
	for _, p := range []termenv.Profile{termenv.TrueColor, termenv.ANSI256, termenv.ANSI, termenv.Ascii} {
		lipgloss.SetColorProfile(p)
		st := draw.NewStyles(draw.DefaultTheme)
		for _, s := range []*draw.Style{&st.Committed, &st.Flash, &st.Leader, &st.TabActive, &st.Text} {
			for _, text := range []string{"●7", "hwm 1509 leo 1510", " ", "✂ n1 truncated"} {
				if got, want := s.Render(text), s.Style.Render(text); got != want {
					t.Errorf("profile %v: %q drawn as %q, lipgloss draws %q", p, text, got, want)
				}
			}
		}
	}
	lipgloss.SetColorProfile(termenv.Ascii)
}

func TestTimelineFilter(t *testing.T) {
	ctx := panelFixture(t)
	p := NewTimeline(ctx)
	p.SetSize(80, 12)
	seen := map[string]bool{}
	for f := p.CycleFilter(); f != ""; f = p.CycleFilter() {
		seen[f] = true
		v := p.View()
		for _, row := range lines(v) {
			// An entry's first row is its time, then its kind.
			if w := strings.Fields(row); len(w) >= 2 && strings.Count(w[0], ":") == 2 && w[1] != f {
				t.Errorf("filter %q shows a %q line:\n%s", f, w[1], v)
			}
		}
	}
	if !seen["truncation"] || !seen["leader-elected"] {
		t.Errorf("the filter does not cycle through every kind: %v", seen)
	}
}

// A timeline entry too long for its rows ends with "…"; one that fits is
// drawn whole.
func TestTimelineCutEntryEndsWithEllipsis(t *testing.T) {
	long := strings.Repeat("the group rebalances and every member must rejoin ", 6)
	v := view.State{Timeline: []view.TimelineLine{{Time: demoStart, Kind: "rebalance", Text: long}, {Time: demoStart, Kind: "command", Text: "kill n1"}}}
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &v
	for _, w := range []int{36, 80} {
		p := NewTimeline(ctx)
		p.SetSize(w, 12)
		out := p.View()
		if !strings.Contains(out, "…") {
			t.Errorf("%d wide: the cut entry has no …:\n%s", w, out)
		}
		if !strings.Contains(out, "kill n1") || strings.Contains(out, "kill n1…") {
			t.Errorf("%d wide: the short entry is not whole:\n%s", w, out)
		}
		checkSize(t, "timeline", out, w, 12)
	}
}

// The raft panel reads what the fault network carried: the leader's
// heartbeats and appends to each follower with their fate, the votes a
// replica asked for, and how soon a follower would stand for election.
func TestRaftPanel(t *testing.T) {
	v := view.State{Nodes: []view.Node{{ID: "n1", Up: true}, {ID: "n2", Up: true}, {ID: "n3"}}, Partitions: []view.Partition{{
		Name: "orders/0", Leader: "n2", Epoch: 4, Replicas: []view.Replica{
			{Node: "n2", Role: "leader", Epoch: 4, Raft: view.RaftView{ElectionIn: -1, Exchanges: []view.RaftExchange{
				{Kind: "append", Peer: "n1", Entries: 3, OK: true, Ago: 12 * time.Millisecond},
				{Kind: "append", Peer: "n3", Lost: "unreachable", Ago: 40 * time.Millisecond},
				{Kind: "vote", Peer: "n1", Term: 4, OK: true, Ago: 2 * time.Second},
			}}},
			{Node: "n1", Role: "follower", Epoch: 4, Raft: view.RaftView{SinceContact: 12 * time.Millisecond, ElectionIn: 988 * time.Millisecond}},
			{Node: "n3", Role: "down"},
		}}}}
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &v
	p := NewRaft(ctx)
	p.SetSize(70, 12)
	out := ansi.Strip(p.View())
	for _, want := range []string{"orders/0", "n2  ▲ leader", "→ n1 append 3 entries ✓ 12ms ago", "→ n3 heartbeat ✗ unreachable 40ms ago",
		"→ n1 vote for term 4 ✓ granted 2.0s ago", "heard a leader 12ms ago · stands in ≥988ms", "n3  ✗ down"} {
		if !strings.Contains(out, want) {
			t.Errorf("the raft panel lacks %q:\n%s", want, out)
		}
	}
	// In the 56 columns of a 100x30 screen, and the 45 of a 120x40 one,
	// when the follower last heard a leader and when it would stand go on
	// rows of their own rather than be cut.
	for _, w := range []int{56, 45} {
		p.SetSize(w, 14)
		out = ansi.Strip(p.View())
		for _, want := range []string{"n1    follower term 4", "heard a leader 12ms ago", "stands in ≥988ms", "→ n1 vote for term 4 ✓ granted 2.0s ago"} {
			if !strings.Contains(out, want) {
				t.Errorf("at %d columns %q is not whole:\n%s", w, want, out)
			}
		}
	}
}

// The raft panel's own keys: with the focus, ←/→ pick the partition it
// shows, whatever node is selected; without it they are the screen's.
func TestRaftPanelPicksAPartition(t *testing.T) {
	part := func(name, leader string) view.Partition {
		return view.Partition{Name: name, Leader: leader, Epoch: 2, Replicas: []view.Replica{{Node: leader, Role: "leader", Epoch: 2}}}
	}
	v := view.State{Nodes: []view.Node{{ID: "n1", Up: true}, {ID: "n2", Up: true}},
		Partitions: []view.Partition{part("orders/0", "n1"), part("orders/1", "n2"), part("orders/2", "n1")}}
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &v
	p := NewRaft(ctx)
	p.SetSize(70, 8)
	shows := func() string { return strings.Fields(ansi.Strip(p.View()))[0] }
	first := shows()
	if p.Update(tea.KeyMsg{Type: tea.KeyRight}, false) || shows() != first {
		t.Fatalf("→ without the focus moved the raft panel from %s to %s", first, shows())
	}
	var seen []string
	for range 3 {
		if !p.Update(tea.KeyMsg{Type: tea.KeyRight}, true) {
			t.Fatal("→ with the focus is not the raft panel's")
		}
		seen = append(seen, shows())
	}
	if seen[2] != first || seen[0] == first || seen[1] == first || seen[0] == seen[1] {
		t.Errorf("→ three times from %s showed %v; want every partition once, then %s again", first, seen, first)
	}
	p.Update(tea.KeyMsg{Type: tea.KeyLeft}, true)
	if shows() != seen[1] {
		t.Errorf("← after %v shows %s; want %s", seen, shows(), seen[1])
	}
}

// The timeline's own keys: f filters it whether it has the focus or not,
// and says so; ↑/↓ scroll it only with the focus.
func TestTimelineKeys(t *testing.T) {
	v := sceneEnd(t)
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &v
	var said string
	ctx.Notify = func(s string) { said = s }
	p := NewTimeline(ctx)
	p.SetSize(80, 12)
	p.Keys.Filter.SetEnabled(true)
	if !p.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("f")}, false) || p.Filter() == "" ||
		!strings.HasPrefix(said, "timeline: only "+p.Filter()) {
		t.Errorf("f on the timeline without the focus: filter %q, said %q", p.Filter(), said)
	}
	if p.Update(tea.KeyMsg{Type: tea.KeyDown}, false) || p.Offset() != 0 {
		t.Error("the timeline scrolled without the focus")
	}
	if !p.Update(tea.KeyMsg{Type: tea.KeyDown}, true) || p.Offset() != 1 {
		t.Errorf("↓ with the focus left the timeline at %d", p.Offset())
	}
	if NewChart(ctx).Update(tea.KeyMsg{Type: tea.KeyDown}, true) {
		t.Error("the chart took a key it has not")
	}
}

// The strip marks where each segment file begins, from the broker's list
// of segments: irregular segments show irregular marks, and the log's
// own start keeps its [.
func TestClusterStripSegments(t *testing.T) {
	r := view.Replica{Node: "n1", Role: "leader", Epoch: 2, LogStart: 0, HWM: 15, LEO: 15, SegmentStarts: []int64{0, 3, 11}}
	for off := int64(0); off < 15; off++ {
		r.Entries = append(r.Entries, view.Entry{Offset: off, Epoch: 2, Committed: true})
	}
	v := view.State{Partitions: []view.Partition{{Name: "events/0", Leader: "n1", Epoch: 2, Replicas: []view.Replica{r}}}}
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &v
	p := NewCluster(ctx)
	p.SetSize(100, 8)
	out := ansi.Strip(p.View())
	want := "[●2 ●2 ●2" + draw.SymSegment + "●2 ●2 ●2 ●2 ●2 ●2 ●2 ●2" + draw.SymSegment + "●2 ●2 ●2 ●2"
	if !strings.Contains(out, want) {
		t.Errorf("the strip does not mark segments at 3 and 11; want %q in:\n%s", want, out)
	}
	if n := strings.Count(out, draw.SymSegment); n != 2 {
		t.Errorf("%d segment marks, want 2 (the first segment begins at the log's start, marked [):\n%s", n, out)
	}
}

// The cluster panel names the folder of the segment files on its last
// row when the partitions leave it free, keeping the path's end when it
// is long.
func TestClusterNamesTheLogFolder(t *testing.T) {
	ctx := panelFixture(t)
	v := *ctx.State
	v.LogDir = "/tmp/mqlab-logs-1234"
	ctx.State = &v
	p := NewCluster(ctx)
	p.SetSize(78, 19) // the partitions fill it
	if strings.Contains(ansi.Strip(p.View()), "files ") {
		t.Errorf("the folder took a row the partitions need:\n%s", ansi.Strip(p.View()))
	}
	p.SetSize(78, 40)
	lines := strings.Split(ansi.Strip(p.View()), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "files /tmp/mqlab-logs-1234/" {
		t.Errorf("last row %q; want the folder", last)
	}
	v.LogDir = "/home/teacher/" + strings.Repeat("x", 80) + "/class-3"
	p.SetSize(60, 40)
	lines = strings.Split(ansi.Strip(p.View()), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); !strings.HasPrefix(last, "files …") || !strings.HasSuffix(last, "/class-3/") {
		t.Errorf("last row %q; want the long folder's end", last)
	}
}

// In the queues pane of a 100x30 screen (56 columns) a message's value
// reads whole: columns take only the room their entries need, and a value
// that does not fit beside them goes on a row of its own.
func TestQueuesShowWholeValues(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &view.State{Queues: []view.Queue{{Name: "receipts", Leader: "n1", Epoch: 2, Visibility: 2 * time.Second, Ready: 2, InFlight: 1,
		Messages: []view.QueueMessage{
			{ID: "checkout-4", Value: "receipt for checkout 4", State: "ready", Receives: 0},
			{ID: "checkout-5", Value: "receipt for checkout 5", State: "ready", Receives: 0},
			{ID: "orders-31", Value: "receipt 881 signed by the courier", State: "in-flight", Worker: "w1", Receives: 1, Due: 5 * time.Second},
		}}}}
	p := NewQueues(ctx)
	for _, w := range []int{56, 76} {
		p.SetSize(w, 12)
		got := p.View()
		checkSize(t, "queues", got, w, 12)
		flat := strings.Join(strings.Fields(got), " ")
		for _, want := range []string{"checkout-4 ● ready recv 0× receipt for checkout 4", "◔ in flight w1 back in 5.0s recv 1×", "receipt 881 signed by the courier"} {
			if !strings.Contains(flat, want) {
				t.Errorf("%d columns: %q is not whole in\n%s", w, want, got)
			}
		}
	}
}

// A table's size after its name reads whole in the services pane of a
// 100x30 screen: shorter words before a cut.
func TestServicesTableCountReadsWhole(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	cols := []string{"order_id", "status", "stage", "latency_ms", "charged", "error", "user_id", "item", "created_at", "answered_at"}
	var rows [][]string
	for i := range 20 {
		rows = append(rows, []string{fmt.Sprint(31 + i), "error", "receipt", "5000", "450", "deadline passed", "7", "phone", "12:00:01", "12:00:06"})
	}
	ctx.State = &view.State{Tables: []view.Table{{Name: "checkout.checkouts", Columns: cols, Rows: rows, Total: 50}}}
	p := NewServices(ctx)
	for _, c := range []struct {
		w    int
		want string
	}{
		{56, "checkout.checkouts  50 rows, last 20 · "},
		{120, "checkout.checkouts  50 rows, the last 20 shown"},
	} {
		p.SetSize(c.w, 8)
		head := lines(p.View())[0]
		if !strings.Contains(head, c.want) || strings.Contains(head, "…") {
			t.Errorf("%d columns: %q, want %q and no cut", c.w, head, c.want)
		}
	}
}

// The cluster pane of a 100x30 screen (56 columns) keeps a replica's
// numbers whole and off the border at four and five digits: the strip
// gives up an offset first.
func TestClusterNumbersKeepTheirRoom(t *testing.T) {
	for _, end := range []int64{1000, 36042} {
		var es []view.Entry
		for o := end - 40; o < end; o++ {
			es = append(es, view.Entry{Offset: o, Epoch: 2})
		}
		rep := func(node, role string) view.Replica {
			return view.Replica{Node: node, Role: role, Epoch: 2, HWM: end, LEO: end, Entries: es}
		}
		ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
		ctx.State = &view.State{Nodes: []view.Node{{ID: "n1", Up: true}, {ID: "n2", Up: true}, {ID: "n3", Up: true}},
			Partitions: []view.Partition{{Name: "orders/0", Leader: "n1", Epoch: 2,
				Replicas: []view.Replica{rep("n1", "leader"), rep("n2", "follower"), rep("n3", "follower")}}}}
		p := NewCluster(ctx)
		p.SetSize(56, 12)
		out := p.View()
		want := fmt.Sprintf("hwm %d leo %d ", end, end)
		n := 0
		for _, l := range lines(out) {
			if strings.Contains(l, "e2 ") && strings.Contains(l, want) {
				n++
			}
		}
		if n != 3 {
			t.Errorf("%d of 3 replica rows end in %q, a cell short of the border:\n%s", n, want, out)
		}
	}
}

// A queue's settings and counts read whole at 56 columns: an item that
// does not fit goes on to the next row rather than being cut, so the
// max receives or length a lesson asks about is on screen.
func TestQueueHeadReadsWhole(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &view.State{Queues: []view.Queue{{Name: "payments", Leader: "n3", Epoch: 2, Visibility: 30 * time.Second,
		MaxReceives: 5, MaxLength: 100, TTL: time.Minute, Ready: 20, DLQ: "payments-dlq", DLQDepth: 1}}}
	p := NewQueues(ctx)
	p.SetSize(56, 8)
	got := p.View()
	checkSize(t, "queues", got, 56, 8)
	flat := strings.Join(strings.Fields(got), " ")
	for _, want := range []string{"payments leader ▲ n3 epoch 2", "visibility 30s", "max receives 5", "max length 100", "ttl 60s",
		"ready 20 · in flight 0 · delayed 0", "DLQ payments-dlq 1"} {
		if !strings.Contains(flat, want) {
			t.Errorf("%q is not whole in\n%s", want, got)
		}
	}
	if strings.Contains(got, "…") {
		t.Errorf("something is cut:\n%s", got)
	}
}

// The Kafka row under the nodes suggests a kcat command only where it
// fits whole: a cut command cannot be typed.
func TestKafkaRowNeverCutsItsCommand(t *testing.T) {
	st := draw.NewStyles(draw.DefaultTheme)
	k := &view.Kafka{Bootstrap: "127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094"}
	for _, c := range []struct {
		w    int
		want string
	}{
		{120, "Kafka 127.0.0.1:19092 · no client connected · try  kcat -b 127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094 -L"},
		{80, "Kafka 127.0.0.1:19092 · no client connected · try  kcat -b 127.0.0.1:19092 -L"},
		{56, "Kafka 127.0.0.1:19092 · no client connected"},
	} {
		got := kafkaRow(st, k, c.w)
		if strings.TrimRight(got, " ") != c.want || draw.Width(got) != c.w {
			t.Errorf("%d columns: %q, want %q", c.w, got, c.want)
		}
	}
}

// The truncation row names the offsets cut and their epoch whole in the
// 56 columns of a 100x30 screen: the lesson on failover points at it.
func TestClusterTruncationReadsWhole(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	var es []view.Entry
	for o := int64(1480); o < 2100; o++ {
		es = append(es, view.Entry{Offset: o, Epoch: 7})
	}
	rep := func(node, role string, tr *view.Truncation) view.Replica {
		return view.Replica{Node: node, Role: role, Epoch: 8, HWM: 2000, LEO: 2100, Entries: es, Truncation: tr}
	}
	tr := &view.Truncation{From: 1500, To: 2100, Epochs: []uint64{7}, At: now}
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &view.State{Time: now, Nodes: []view.Node{{ID: "n1", Up: true}, {ID: "n2", Up: true}, {ID: "n3", Up: true}},
		Partitions: []view.Partition{{Name: "orders/0", Leader: "n2", Epoch: 8,
			Replicas: []view.Replica{rep("n1", "follower", tr), rep("n2", "leader", nil), rep("n3", "follower", nil)}}}}
	p := NewCluster(ctx)
	p.SetSize(56, 12)
	out := p.View()
	if !strings.Contains(out, "✂ n1 truncated: cut 1500–2099 (epoch 7)") {
		t.Errorf("the truncation row is cut:\n%s", out)
	}
}

// A node that leads more partitions than its row holds names whole ones
// and how many more, rather than cut a name.
func TestClusterNodeLeadsReadWhole(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &view.State{Nodes: []view.Node{
		{ID: "n1", Up: true, Leads: []string{"controller", "orders-6/2", "orders-6/5", "orders-8/1", "orders-8/7"}},
		{ID: "n2", Up: true, Leads: []string{"orders-6/0"}},
		{ID: "n3", Up: true}}}
	p := NewCluster(ctx)
	p.SetSize(56, 10)
	row := lines(p.View())[0]
	if !strings.Contains(row, "leads ▲ controller, orders-6/2 +3 more") || strings.Contains(row, "…") {
		t.Errorf("n1's row: %q", row)
	}
}

// A group's lag is offsets, as lag(G) counts it: on a compacted topic it
// counts emptied offsets too, so the panel must not call it messages.
func TestGroupLagInOffsets(t *testing.T) {
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &view.State{Groups: []view.Group{{Name: "audit", Topic: "order-status", Generation: 1, State: "stable", Lag: 12, LagSeconds: 3}}}
	for _, w := range []int{80, 40} {
		p := NewGroups(ctx)
		p.SetSize(w, 6)
		got := ansi.Strip(p.View())
		if !strings.Contains(got, "lag 12 offsets · 3.0s") || strings.Contains(got, "msgs") {
			t.Errorf("%d columns:\n%s\nwant the lag said as 12 offsets", w, got)
		}
	}
}
