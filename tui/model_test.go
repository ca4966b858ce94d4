package tui

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/panel"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

func keyMsg(s string) tea.KeyMsg {
	switch s {
	case "space":
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "shift+tab":
		return tea.KeyMsg{Type: tea.KeyShiftTab}
	case "left":
		return tea.KeyMsg{Type: tea.KeyLeft}
	case "right":
		return tea.KeyMsg{Type: tea.KeyRight}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "backspace":
		return tea.KeyMsg{Type: tea.KeyBackspace}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

// press sends keys to the model and, when a key started a lab command,
// runs it and feeds the result back, as the program would.
func press(m *Model, keys ...string) {
	for _, k := range keys {
		_, cmd := m.Update(keyMsg(k))
		if cmd != nil && m.running != "" {
			m.Update(cmd()) // the exec: the fake answers at once
		}
	}
}

func newTestModel(t *testing.T, v view.State, w, h int) (*Model, *fakeSource) {
	t.Helper()
	src := newFakeSource(v)
	m := New(src, Options{})
	t.Cleanup(m.Close)
	m.Update(teaSize(w, h))
	return m, src
}

// Every key that changes the lab sends the line the prompt would run.
func TestKeysSendCommands(t *testing.T) {
	v := sceneEnd(t)
	v.Lesson = &view.Lesson{ID: "t", Title: "t", Step: 2, Steps: 3, Status: lessons.StatusStepDone}
	cases := []struct {
		keys []string
		want string
	}{
		{[]string{"k"}, "kill n1"},
		{[]string{"right", "k"}, "kill n2"},
		{[]string{"K"}, "kill leader(orders/0)"},      // n1 leads nothing: the first partition's leader
		{[]string{"3", "K"}, "kill leader(orders/2)"}, // the partition the selected node leads
		{[]string{"3", "r"}, "restart n3"},
		{[]string{"left", "i"}, "isolate n3"},
		{[]string{"h"}, "heal"},
		{[]string{"space"}, "pause"},
		{[]string{"+"}, "speed 2x"},
		{[]string{"-"}, "speed 0.5x"},
		{[]string{"L"}, "kafka listen"},
		{[]string{"n"}, source.CmdLessonNext},
		{[]string{"p"}, source.CmdLessonPrev},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			m, src := newTestModel(t, v, 120, 40)
			press(m, c.keys...)
			if got := src.got(); len(got) != 1 || got[0] != c.want {
				t.Errorf("keys %v sent %q, want [%q]", c.keys, got, c.want)
			}
		})
	}
	t.Run("resume when paused", func(t *testing.T) {
		pv := v
		pv.Clock.Paused = true
		m, src := newTestModel(t, pv, 120, 40)
		press(m, "space")
		if !src.has("resume") {
			t.Errorf("space on a paused lab sent %q", src.got())
		}
	})
	t.Run("stop listening when listening", func(t *testing.T) {
		kv := v
		kv.Kafka = &view.Kafka{Bootstrap: "127.0.0.1:9092"}
		m, src := newTestModel(t, kv, 120, 40)
		press(m, "L")
		if !src.has("kafka stop") {
			t.Errorf("L on a listening lab sent %q", src.got())
		}
	})
	t.Run("answer a prediction", func(t *testing.T) {
		pv := v
		pred := &view.Prediction{Question: "q", Choices: []string{"7", "8", "9"}, Chosen: -1, Answer: -1}
		pv.Lesson = &view.Lesson{Title: "t", Step: 2, Steps: 3, Status: lessons.StatusPredict, Prediction: pred,
			Blocks: []view.LessonBlock{{Kind: view.BlockPrediction, Prediction: pred}}}
		m, src := newTestModel(t, pv, 120, 40)
		press(m, "b")
		if !src.has("predict b") {
			t.Errorf("b sent %q", src.got())
		}
	})
	t.Run("answer with a number", func(t *testing.T) {
		pv := v
		pred := &view.Prediction{Question: "How many a second?", Numeric: true, Chosen: -1, Answer: -1}
		pv.Lesson = &view.Lesson{Title: "t", Step: 2, Steps: 3, Status: lessons.StatusPredict, Prediction: pred,
			Blocks: []view.LessonBlock{{Kind: view.BlockPrediction, Prediction: pred}}}
		m, src := newTestModel(t, pv, 120, 40)
		if v := m.View(); !strings.Contains(v, "type a number and press enter") {
			t.Errorf("the open numeric question does not say how to answer:\n%s", v)
		}
		press(m, "1")
		press(m, "6", "0", "0", "enter")
		if !src.has("predict 1600") {
			t.Errorf("1600 and enter sent %q", src.got())
		}
	})
	// Keys that arrive in one read come as one message of several runes:
	// each is a key press of its own, in order.
	t.Run("a number typed in one burst", func(t *testing.T) {
		pv := v
		pred := &view.Prediction{Question: "How many a second?", Numeric: true, Chosen: -1, Answer: -1}
		pv.Lesson = &view.Lesson{Title: "t", Step: 2, Steps: 3, Status: lessons.StatusPredict, Prediction: pred,
			Blocks: []view.LessonBlock{{Kind: view.BlockPrediction, Prediction: pred}}}
		m, src := newTestModel(t, pv, 120, 40)
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("90")})
		press(m, "enter")
		if !src.has("predict 90") {
			t.Errorf("90 in one message, then enter, sent %q", src.got())
		}
	})
	t.Run("a command typed in one burst", func(t *testing.T) {
		m, src := newTestModel(t, v, 120, 40)
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(":kill n2")})
		press(m, "enter")
		if !src.has("kill n2") {
			t.Errorf(":kill n2 in one message, then enter, sent %q", src.got())
		}
	})
	t.Run("a paste goes into the prompt", func(t *testing.T) {
		m, src := newTestModel(t, v, 120, 40)
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("kill n2"), Paste: true})
		if len(src.got()) != 0 {
			t.Fatalf("a paste ran %q as keys", src.got())
		}
		press(m, "enter")
		if !src.has("kill n2") {
			t.Errorf("a pasted kill n2, then enter, sent %q", src.got())
		}
	})
}

func TestStatusShowsResultAndError(t *testing.T) {
	m, src := newTestModel(t, sceneEnd(t), 120, 40)
	src.reply = func(line string) (string, error) {
		if line == "kill n1" {
			return "", errors.New("n1 is already down")
		}
		return "every link restored", nil
	}
	press(m, "k")
	if v := m.View(); !strings.Contains(v, "✗ kill n1: n1 is already down") {
		t.Errorf("error not in the status line:\n%s", v)
	}
	press(m, "h")
	if v := m.View(); !strings.Contains(v, "✓ heal — every link restored") {
		t.Errorf("result not in the status line:\n%s", v)
	}
	src.reply = func(string) (string, error) { return "line one\nline two\nline three", nil }
	press(m, ":", "h", "e", "l", "p", "enter")
	v := m.View()
	if !strings.Contains(v, "line three") || !strings.Contains(v, "esc closes") {
		t.Errorf("multi-line output not shown:\n%s", v)
	}
	press(m, "esc")
	if strings.Contains(m.View(), "line three") {
		t.Error("esc does not close the output")
	}
}

// Typing q, k or space in the prompt types them; it does not quit or kill.
func TestPromptTakesKeysFirst(t *testing.T) {
	m, src := newTestModel(t, sceneEnd(t), 120, 40)
	press(m, ":", "q", "k", " ", "x")
	if m.base.Err() != nil {
		t.Fatal("typing q in the prompt quits")
	}
	if len(src.got()) != 0 {
		t.Errorf("typing in the prompt ran %q", src.got())
	}
	if v := m.prompt.in.Value(); v != "qk x" {
		t.Errorf("prompt holds %q, want %q", v, "qk x")
	}
	press(m, "esc")
	if m.prompt.active() {
		t.Error("esc does not close the prompt")
	}
}

func TestPromptHistoryAndCompletion(t *testing.T) {
	m, src := newTestModel(t, sceneEnd(t), 120, 40)
	press(m, ":", "k", "i", "l", "l", " ", "n", "2", "enter")
	press(m, ":", "h", "e", "a", "l", "enter")
	press(m, ":", "up", "up", "enter")
	if got := src.got(); len(got) != 3 || got[2] != "kill n2" {
		t.Errorf("history recall ran %q", got)
	}
	press(m, ":", "c", "h", "e")
	if !strings.Contains(m.View(), "tab → check") {
		t.Errorf("no completion hint:\n%s", m.View())
	}
	press(m, "tab", "enter")
	if got := src.got(); got[len(got)-1] != "check" {
		t.Errorf("tab completion ran %q", got)
	}
}

func TestHistory(t *testing.T) {
	d := newSceneSource(t, 0)
	m := New(d, Options{})
	t.Cleanup(m.Close)
	m.Update(teaSize(120, 40))
	for i := 0; i < 20; i++ {
		d.step(1)
		m.Update(changeMsg{})
	}
	live := m.ctx.State.Time
	press(m, "[", "[", "[")
	if !m.ctx.InHistory || !m.ctx.State.Time.Before(live) {
		t.Fatalf("[ does not step back: in history %v, time %v (live %v)", m.ctx.InHistory, m.ctx.State.Time, live)
	}
	past := m.ctx.State.Time
	v := m.View()
	if !strings.Contains(v, "HISTORY "+past.Format("15:04:05.000")) || !strings.Contains(v, "press ] to step forward") {
		t.Errorf("no history banner:\n%s", lines(v)[0])
	}
	// New states keep arriving; the past under the cursor stays put.
	d.step(10)
	m.Update(changeMsg{})
	if !m.ctx.State.Time.Equal(past) {
		t.Errorf("history moved under the learner: %v, want %v", m.ctx.State.Time, past)
	}
	// Changing the lab from the past is refused with the way back.
	press(m, "k")
	if v := m.View(); !strings.Contains(v, "esc returns to live") {
		t.Errorf("k in history is not refused:\n%s", v)
	}
	press(m, "]", "]", "]", "]", "]")
	if m.ctx.InHistory {
		t.Error("] does not return to live")
	}
	press(m, "[", "esc")
	if m.ctx.InHistory {
		t.Error("esc does not return to live")
	}
}

// { and } jump from event to event: the moment each happened.
func TestHistoryEvents(t *testing.T) {
	kill := sceneFrame(t, "node-killed", "n1")
	d := newSceneSource(t, kill-5)
	m := New(d, Options{})
	t.Cleanup(m.Close)
	m.Update(teaSize(120, 40))
	step := func(n int) {
		for i := 0; i < n; i++ {
			d.step(1)
			m.Update(changeMsg{})
		}
	}
	step(5) // the kill
	step(8) // the producer on the new leader while n1 is down
	press(m, "{")
	if got := lastEvent(m.ctx.State).Kind; got != "leader-elected" && got != "produce-failed" && got != "redelivery" {
		t.Logf("first jump lands after %q", got)
	}
	first := lastEvent(m.ctx.State)
	// The state before the one we landed on shows an older event.
	if i := m.hist.cursor; i > m.hist.first && lastEvent(m.hist.at(i-1)) == first {
		t.Errorf("{ did not land on the moment %q happened", first.Text)
	}
	// Moment by moment, { walks back to the one where the kill first shows
	// (a recorded state can hold several events: the kill is in it).
	killed := func(v *view.State) bool {
		return slices.ContainsFunc(v.Timeline, func(l view.TimelineLine) bool { return l.Kind == "node-killed" })
	}
	atKill := func() bool {
		i := m.hist.cursor
		return i >= 0 && killed(m.ctx.State) && (i == m.hist.first || !killed(m.hist.at(i-1)))
	}
	for i := 0; i < 60 && !atKill(); i++ {
		press(m, "{")
	}
	if !atKill() {
		t.Fatalf("{ never reached the kill; at %+v", lastEvent(m.ctx.State))
	}
	text := []rune(lastEvent(m.ctx.State).Text)
	if want := "last event: " + string(text[:min(15, len(text))]); !strings.Contains(lines(m.View())[0], want) {
		t.Errorf("the banner does not say what just happened (%q): %s", want, lines(m.View())[0])
	}
	for i := 0; i < 60 && m.ctx.InHistory; i++ {
		press(m, "}")
	}
	if m.ctx.InHistory {
		t.Error("} never returns to live")
	}
}

func TestHistoryRingBounded(t *testing.T) {
	h := newHistory(5)
	for i := 0; i < 12; i++ {
		v := &view.State{Time: demoStart.Add(time.Duration(i) * time.Second)}
		h.push(v)
	}
	if len(h.states) != 5 {
		t.Fatalf("ring holds %d states, want 5", len(h.states))
	}
	n := 0
	for h.back() {
		n++
	}
	if n != 4 || !h.current().Time.Equal(demoStart.Add(7*time.Second)) {
		t.Errorf("stepped back %d times to %v", n, h.current().Time)
	}
	// The oldest state falls out of the ring under the cursor: it moves on.
	h.push(&view.State{Time: demoStart.Add(12 * time.Second)})
	if !h.current().Time.Equal(demoStart.Add(8 * time.Second)) {
		t.Errorf("cursor at %v after the oldest was dropped", h.current().Time)
	}
}

// Unchanged log windows are shared between states in the ring.
func TestHistoryShares(t *testing.T) {
	a, b := sceneEnd(t), sceneEnd(t)
	h := newHistory(10)
	h.push(&a)
	h.push(&b)
	if &a.Partitions[0].Replicas[0].Entries[0] != &b.Partitions[0].Replicas[0].Entries[0] {
		t.Error("equal windows are not shared")
	}
}

func TestReadOnly(t *testing.T) {
	src := newFakeSource(sceneEnd(t))
	m := New(src, Options{ReadOnly: true})
	t.Cleanup(m.Close)
	m.Update(teaSize(120, 40))
	press(m, "k", "h", ":", "h", "e", "a", "l", "enter")
	if len(src.got()) != 0 {
		t.Errorf("a recording ran %q", src.got())
	}
	if !strings.Contains(m.View(), "cannot be changed") {
		t.Errorf("no word of why:\n%s", m.View())
	}
}

func TestTooSmall(t *testing.T) {
	m, _ := newTestModel(t, sceneEnd(t), 60, 20)
	v := m.View()
	if !strings.Contains(v, "at least 80×24") || !strings.Contains(v, "60×20") {
		t.Errorf("no notice at 60×20:\n%s", v)
	}
	if len(lines(v)) != 20 {
		t.Errorf("notice is %d rows, want 20", len(lines(v)))
	}
	golden(t, "root_60x20", v)
	m.Update(teaSize(79, 40))
	if !strings.Contains(m.View(), "at least 80×24") {
		t.Error("79 columns is below the minimum")
	}
	m.Update(teaSize(80, 24))
	if strings.Contains(m.View(), "at least 80×24") {
		t.Error("80×24 is enough")
	}
}

// The whole screen fits every size exactly, from the minimum up.
func TestRootSizes(t *testing.T) {
	v := sceneEnd(t)
	for _, sz := range [][2]int{{80, 24}, {100, 30}, {120, 40}, {150, 45}, {200, 60}, {81, 25}, {99, 26}, {119, 36}, {300, 90}} {
		m, _ := newTestModel(t, v, sz[0], sz[1])
		for _, extra := range [][]string{nil, {"?"}, {"?", "tab", "tab", "tab"}, {":"}} {
			press(m, extra...)
			checkSize(t, "root", m.View(), sz[0], sz[1])
			press(m, "esc")
		}
	}
}

func TestRootGoldens(t *testing.T) {
	v := sceneEnd(t)
	for _, sz := range [][2]int{{80, 24}, {100, 30}, {120, 40}, {200, 60}} {
		m, _ := newTestModel(t, v, sz[0], sz[1])
		golden(t, fmt.Sprintf("root_%dx%d", sz[0], sz[1]), m.View())
	}
	m, _ := newTestModel(t, v, 100, 30)
	press(m, "?")
	golden(t, "help_100x30", m.View())
}

// Clicking a node selects it; clicking a tab shows its panel.
func TestMouse(t *testing.T) {
	m, src := newTestModel(t, sceneEnd(t), 120, 40)
	si, _ := m.lay.slotOf(panel.ClusterID)
	r := m.lay.slots[si].r
	m.View()
	m.Update(tea.MouseMsg{X: r.x + 4, Y: r.y + 1 + 2, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
	if m.ctx.SelectedNode() != "n3" {
		t.Fatalf("click on n3 selected %q", m.ctx.SelectedNode())
	}
	press(m, "k")
	if !src.has("kill n3") {
		t.Errorf("k after the click sent %q", src.got())
	}
	gi, _ := m.lay.slotOf(panel.QueuesID)
	g := m.lay.slots[gi]
	spans := draw.TabSpans(m.tabs(&g), g.active)
	m.Update(tea.MouseMsg{X: g.r.x + spans[1][0] + 1, Y: g.r.y, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
	if !m.lay.visible(panel.QueuesID) || m.focus != panel.QueuesID {
		t.Error("clicking the Queues tab does not show it")
	}
	// The wheel scrolls the pane under the pointer, and the output pane
	// when one is open.
	ti, _ := m.lay.slotOf(panel.TimelineID)
	tr := m.lay.slots[ti].r
	_, tp := m.lay.slotOf(panel.TimelineID)
	m.lay.slots[ti].active = tp
	before := m.timeline.Offset()
	m.Update(tea.MouseMsg{X: tr.x + 2, Y: tr.y + 2, Button: tea.MouseButtonWheelDown, Action: tea.MouseActionPress})
	if m.timeline.Offset() != before+1 {
		t.Errorf("the wheel over the timeline moved it from %d to %d", before, m.timeline.Offset())
	}
	m.showOutput("help", strings.Repeat("line\n", 200))
	m.Update(tea.MouseMsg{X: 5, Y: 5, Button: tea.MouseButtonWheelDown, Action: tea.MouseActionPress})
	if m.outputOff != 1 {
		t.Errorf("the wheel over the output pane left it at %d", m.outputOff)
	}
}

// Ten thousand random keys, clicks and resizes: the screen never panics
// and always fills the window exactly.
func TestRandomInput(t *testing.T) {
	d := newSceneSource(t, 0)
	m := New(d, Options{HistorySize: 50})
	t.Cleanup(m.Close)
	rnd := rand.New(rand.NewSource(42))
	keys := []string{"k", "r", "i", "h", "space", "+", "-", "n", "p", "a", "b", "c", "d", "[", "]", ":", "?", "tab",
		"shift+tab", "left", "right", "up", "down", "enter", "esc", "f", "1", "2", "3", "4", "9", "x", "q", "backspace", "0"}
	w, h := 120, 40
	m.Update(teaSize(w, h))
	for i := 0; i < 10000; i++ {
		var msg tea.Msg
		switch r := rnd.Intn(100); {
		case r < 80:
			msg = keyMsg(keys[rnd.Intn(len(keys))])
		case r < 85:
			w, h = 20+rnd.Intn(230), 5+rnd.Intn(80)
			msg = teaSize(w, h)
		case r < 90:
			msg = tea.MouseMsg{X: rnd.Intn(w + 5), Y: rnd.Intn(h + 5), Button: tea.MouseButton(rnd.Intn(6)), Action: tea.MouseActionPress}
		case r < 94:
			d.goTo((d.pos + 1 + rnd.Intn(8)) % scene(t).Frames())
			msg = changeMsg{}
		case r < 97:
			msg = execDoneMsg{line: "kill n1", out: "x\ny", err: nil}
		default:
			msg = flashTickMsg{}
		}
		if km, ok := msg.(tea.KeyMsg); ok && km.String() == "q" {
			continue // quitting ends nothing here, but it stops the model's waits
		}
		m.Update(msg)
		if i%7 == 0 {
			v := m.View()
			if !m.tooSmall && i%70 == 0 {
				checkSize(t, "random", v, w, h)
			}
		}
	}
}

// A side slot shows a panel with something in it, until the learner
// picks a panel themselves.
func TestSideSlotShowsWhatTheLabHas(t *testing.T) {
	v := view.State{Nodes: []view.Node{{ID: "n1", Up: true}}, Queues: []view.Queue{{Name: "receipts", Leader: "n1", Epoch: 1}}}
	for _, size := range [][2]int{{100, 30}, {120, 40}} {
		m, src := newTestModel(t, v, size[0], size[1])
		m.pull()
		if si, _ := m.lay.slotOf(panel.ClusterID); !m.lay.visible(panel.QueuesID) || len(m.lay.slots[si].panels) > 1 && m.lay.visible(panel.ClusterID) {
			t.Fatalf("%v, queues but no topics: the slots are %v; want the queues in front", size, m.lay.slots)
		}
		// A topic appears: the queues stay in front, nothing flickers.
		src.set(func(v *view.State) { v.Partitions = []view.Partition{{Name: "orders/0", Leader: "n1", Epoch: 1}} })
		m.pull()
		if !m.lay.visible(panel.QueuesID) {
			t.Errorf("%v: a new topic moved the queues away: %v", size, m.lay.slots)
		}
	}
	// A fresh sandbox, nodes and nothing else: the cluster at every size,
	// also where every panel shares one row of tabs.
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 40}} {
		m, _ := newTestModel(t, view.State{Nodes: v.Nodes}, size[0], size[1])
		m.pull()
		if !m.lay.visible(panel.ClusterID) {
			t.Errorf("%v: a fresh sandbox opens on %v, not the cluster", size, m.lay.slots)
		}
	}
	// Once the learner picks a panel, an empty one stays in front.
	m, src := newTestModel(t, view.State{Nodes: v.Nodes}, 100, 30)
	m.pull()
	press(m, "tab") // from the lesson to the next tab of its box
	focus := m.focus
	src.set(func(v *view.State) { v.Queues = []view.Queue{{Name: "receipts", Leader: "n1", Epoch: 1}} })
	m.pull()
	if !m.lay.visible(focus) {
		t.Errorf("after tab the learner's panel %v must stay in front: %v", focus, m.lay.slots)
	}
}

// Stepped into the past, the position holds while live states keep
// arriving: the count does not grow, and ] as often as [ returns to live.
func TestHistoryHoldsStill(t *testing.T) {
	h := newHistory(100)
	push := func(n int) {
		for i := 0; i < n; i++ {
			h.push(&view.State{Time: demoStart.Add(time.Duration(len(h.states)) * time.Second)})
		}
	}
	push(10)
	for i := 0; i < 3; i++ {
		h.back()
	}
	at := h.current().Time
	push(5)
	if n := h.stepsBack(); n != 3 {
		t.Errorf("%d back after live states arrived, want 3", n)
	}
	if !h.current().Time.Equal(at) {
		t.Errorf("the state shown moved from %v to %v", at, h.current().Time)
	}
	for i := 0; i < 3; i++ {
		h.forward()
	}
	if !h.live() {
		t.Errorf("three ] after three [ leave the cursor %d back, not live", h.stepsBack())
	}
	push(2)
	h.backEvent() // every state's newest event is the same: the first state
	push(4)
	if n := h.stepsBack(); n != h.end-h.first || h.end != 16 {
		t.Errorf("after { and more live states: %d back from %d", n, h.end)
	}
}

// At 100x30 with two loads running, the header keeps the lesson's name
// readable, its head whole rather than cut inside a word; the jobs
// shorten first. The footer keeps : and ? at every size.
func TestHeaderAndFooterKeepWhatMatters(t *testing.T) {
	v := sceneEnd(t)
	v.Lesson = &view.Lesson{ID: "flash-sale", Title: "The flash sale: a backlog you can watch grow", Step: 2, Steps: 5, Status: lessons.StatusStepDone}
	v.Jobs = []view.Job{{Name: "load orders as checkout (waiting)", Done: 300, Total: 1000}, {Name: "load orders as storefront", Done: 10, Total: 100}}
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 40}} {
		m, _ := newTestModel(t, v, size[0], size[1])
		rows := strings.Split(m.View(), "\n")
		if !strings.Contains(rows[0], "mqlab │ The flash sale · step 2/5") {
			t.Errorf("%dx%d: the header %q cuts the lesson's name short", size[0], size[1], rows[0])
		}
		footer := rows[len(rows)-1]
		if !strings.Contains(footer, ": command") || !strings.Contains(footer, "? help") {
			t.Errorf("%dx%d: the footer %q lost : or ?", size[0], size[1], footer)
		}
	}
}

// An error too long for the status line opens in full above it.
func TestLongErrorOpensInFull(t *testing.T) {
	m, src := newTestModel(t, sceneEnd(t), 80, 24)
	src.reply = func(string) (string, error) {
		return "", errors.New(`line 1, col 1: unknown command "prodce"; did you mean "produce"?`)
	}
	press(m, ":")
	press(m, strings.Split("prodce orders count=2 acks=all idempotent=true", "")...)
	press(m, "enter")
	if v := m.View(); !strings.Contains(v, `did you mean "produce"?`) {
		t.Fatalf("the error's suggestion is nowhere on screen:\n%s", v)
	}
}

// A command's output wraps in its pane, each continuation under the
// text it continues, so help's defaults at the ends of lines show at
// 80x24.
func TestOutputWrapsToThePane(t *testing.T) {
	m, src := newTestModel(t, sceneEnd(t), 80, 24)
	src.reply = func(string) (string, error) {
		return "load TOPIC|QUEUE rate=N/s for=DURATION\n" +
			"  acks=0|1|all           when the leader answers: 0 never, 1 once it stored it, all once a majority holds it (default all)\n" +
			"  batch=N                records per request (default 1)", nil
	}
	press(m, ":")
	press(m, strings.Split("help load", "")...)
	press(m, "enter")
	v := m.View()
	if !strings.Contains(v, "(default all)") || !strings.Contains(v, "                         it, all once") {
		t.Fatalf("the help's long line is not wrapped under its text:\n%s", v)
	}
}

// A new step brings the lesson forward, at its top, with the timeline
// showing every kind of event again, however the step changed.
func TestNewStepBringsTheLessonForward(t *testing.T) {
	v := sceneEnd(t)
	v.Lesson = &view.Lesson{ID: "t", Title: "t", Step: 1, Steps: 3, Status: lessons.StatusStepDone}
	m, src := newTestModel(t, v, 80, 24)
	press(m, "tab", "tab", "tab")
	if m.timeline.CycleFilter() == "" {
		t.Fatal("the timeline has no kind of event to filter by")
	}
	if m.focus == panel.LessonID {
		t.Fatal("tab did not move the focus off the lesson")
	}
	src.set(func(s *view.State) { s.Lesson = &view.Lesson{ID: "t", Title: "t", Step: 2, Steps: 3} })
	m.pull()
	if m.focus != panel.LessonID || m.timeline.Filter() != "" {
		t.Errorf("after the step changed, focus is on panel %d with the timeline filter %q", m.focus, m.timeline.Filter())
	}
	if !strings.Contains(m.View(), "┏━[Lesson]") && !strings.Contains(m.View(), "[Lesson]") {
		t.Errorf("the lesson is not in front:\n%s", m.View())
	}
}

// A finished lesson offers the next one.
func TestFinishedLessonOffersTheNext(t *testing.T) {
	v := sceneEnd(t)
	v.Lesson = &view.Lesson{ID: "t", Title: "t", Step: 3, Steps: 3, Status: lessons.StatusFinished, Next: "5 · Idempotency keys"}
	src := newFakeSource(v)
	m := New(src, Options{BackToLessons: true})
	t.Cleanup(m.Close)
	m.Update(teaSize(120, 40))
	if view := m.View(); !strings.Contains(view, "Next: 5 · Idempotency") || !strings.Contains(view, "keys — backspace goes back to the") {
		t.Errorf("the finish does not offer the next lesson:\n%s", view)
	}
}

// Tab moves the focus in the screen's reading order at every size: each
// panel once, column by column from the left and down each column, never
// back to a box already left; shift+tab goes the same way back.
func TestTabFollowsTheReadingOrder(t *testing.T) {
	v := sceneEnd(t)
	v.Lesson = &view.Lesson{ID: "t", Title: "t", Step: 1, Steps: 3, Status: lessons.StatusStepDone}
	for _, size := range [][2]int{{80, 24}, {100, 30}, {140, 40}, {200, 60}} {
		m, _ := newTestModel(t, v, size[0], size[1])
		start := m.focus
		seen := map[panel.ID]bool{start: true}
		var path []panel.ID
		for range panel.Count {
			prev := m.focus
			press(m, "tab")
			path = append(path, m.focus)
			if len(path) == int(panel.Count) {
				break
			}
			seen[m.focus] = true
			a, _ := m.lay.slotOf(prev)
			b, _ := m.lay.slotOf(m.focus)
			ra, rb := m.lay.slots[a].r, m.lay.slots[b].r
			if rb.x < ra.x || rb.x == ra.x && rb.y < ra.y {
				t.Errorf("%v: tab went from %v (box at %d,%d) back to %v (box at %d,%d); path %v", size, prev, ra.x, ra.y, m.focus, rb.x, rb.y, path)
			}
		}
		if len(seen) != int(panel.Count) || m.focus != start {
			t.Errorf("%v: tab visited %d panels and ended on %v, want all %d and back to %v: %v", size, len(seen), m.focus, panel.Count, start, path)
		}
		press(m, "tab", "shift+tab")
		if m.focus != start {
			t.Errorf("%v: shift+tab after tab is on %v, want %v", size, m.focus, start)
		}
	}
}

// A long command's one-line answer stays readable: a status too long for
// its row goes on in the footer's row, whose keys give way to it but for
// : and ?; where even two rows are too few, the command, which the
// learner has just typed, is cut rather than what the lab said back.
func TestStatusKeepsTheAnswerOfALongCommand(t *testing.T) {
	for _, c := range []struct {
		w, h         int
		line, answer string
		wholeCommand bool
	}{
		{100, 30, `load orders rate=1/s for=1s key=881 value="order 881 packed" acks=all idempotent=true as=checkout`,
			"waits until your choice is complete: n (or space) runs it", true},
		{100, 30, "consumer start cashback-1 group=cashback topic=orders service=wallet",
			"waits with the 1 before it until your choice is complete: n (or space) runs them", true},
		{80, 24, "consumer start cashback-1 group=cashback topic=orders service=wallet",
			"waits with the 1 before it until your choice is complete: n (or space) runs them", false},
		{80, 24, `load orders rate=1/s for=1s key=881 value="order 881 packed" acks=all idempotent=true as=checkout`,
			"waits with the 1 before it until your choice is complete: n (or space) runs them", false},
	} {
		m, src := newTestModel(t, sceneEnd(t), c.w, c.h)
		src.reply = func(string) (string, error) { return c.answer, nil }
		press(m, ":")
		press(m, strings.Split(c.line, "")...)
		press(m, "enter")
		rows := strings.Split(m.View(), "\n")
		two := rows[len(rows)-2] + "\n" + rows[len(rows)-1]
		flat := strings.Join(strings.Fields(two), " ")
		if !strings.Contains(flat, c.answer) || !strings.Contains(flat, "✓ consumer start") && !strings.Contains(flat, "✓ load orders") {
			t.Errorf("%dx%d: the status reads\n%s\nwant the command, cut if need be, and all of %q", c.w, c.h, two, c.answer)
		}
		if c.wholeCommand && !strings.Contains(flat, c.line) {
			t.Errorf("%dx%d: the status reads\n%s\nwant all of %q", c.w, c.h, two, c.line)
		}
		if last := rows[len(rows)-1]; !strings.Contains(last, ": command") || !strings.Contains(last, "? help") || draw.Width(last) != c.w {
			t.Errorf("%dx%d: the footer %q lost : or ?, or is not %d wide", c.w, c.h, last, c.w)
		}
	}
}
