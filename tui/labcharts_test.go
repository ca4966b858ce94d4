package tui

import (
	"testing"

	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

// Jobs show their progress in the header; at 80 columns they shrink so
// the clock stays in view.
func TestHeaderJobs(t *testing.T) {
	v := view.State{Time: demoStart, Clock: view.Clock{Speed: 1}, Timing: "classroom", Jobs: []view.Job{
		{Name: "load orders", Done: 800, Total: 2000},
		{Name: "check: draining orders/2", Done: 2, Total: 5},
	}}
	for _, c := range []struct {
		w    int
		want []string
	}{
		{120, []string{"load orders ▰▰▰▱▱▱▱▱ 40%", "check: draining orders/2 ▰▰▰▱▱▱▱▱ 40%", "▶ running", demoStart.Format("15:04:05.0"), "classroom"}},
		{80, []string{"load orders ▰▰▱▱▱ 40%", "+1 more", "▶ running", demoStart.Format("15:04:05.0")}},
	} {
		m, _ := newTestModel(t, v, c.w, 24)
		head := lines(m.View())[0]
		if draw.Width(head) != c.w {
			t.Errorf("%d columns: the header is %d wide", c.w, draw.Width(head))
		}
		if !containsAll(head, c.want...) {
			t.Errorf("%d columns: header %q, want %q in it", c.w, head, c.want)
		}
	}
}

// The history ring keeps one copy of a series that did not move between
// two states, and its own copy of one that did.
func TestHistorySharesSeries(t *testing.T) {
	snap := flashSale()
	a, b := source.ViewOf(&snap), source.ViewOf(&snap)
	snap.Series[1].Values = append(snap.Series[1].Values, 5)
	c := source.ViewOf(&snap)
	h := newHistory(10)
	h.push(&a)
	h.push(&b)
	h.push(&c)
	if &a.Charts.Series[0].Values[0] != &b.Charts.Series[0].Values[0] {
		t.Error("two equal series are kept twice")
	}
	if &a.Charts.Retries[0].Times[0] != &b.Charts.Retries[0].Times[0] {
		t.Error("two equal spreads are kept twice")
	}
	if &b.Charts.Series[0].Values[0] == &c.Charts.Series[0].Values[0] || len(c.Charts.Series[0].Values) != 81 {
		t.Error("a series that moved shares the values of the one before")
	}
}

// A screen watching a run that has ended says so in its header, not that
// the lab runs.
func TestHeaderRunOver(t *testing.T) {
	v := view.State{Time: demoStart, Clock: view.Clock{Speed: 1}, Timing: "fast"}
	over := false
	m := New(newFakeSource(v), Options{Over: func() bool { return over }})
	t.Cleanup(m.Close)
	m.Update(teaSize(100, 24))
	if head := lines(m.View())[0]; !containsAll(head, "▶ running") || containsAll(head, "run over") {
		t.Errorf("before the end: %q", head)
	}
	over = true
	if head := lines(m.View())[0]; !containsAll(head, "■ run over") || containsAll(head, "running") {
		t.Errorf("after the end: %q", head)
	}
}

// When lab time waits for a busy machine, the header says how fast it
// really ran beside the speed that was asked for, and only then.
func TestHeaderSaysWhenTheMachineIsBehind(t *testing.T) {
	for _, c := range []struct {
		behind float64
		w      int
		want   string
	}{
		{0.4, 120, "▶ running 10x · ≈6x, the machine is behind"},
		{0.4, 80, "≈6x"},
		{0.02, 120, ""},
	} {
		v := view.State{Time: demoStart, Clock: view.Clock{Speed: 10, Behind: c.behind}, Timing: "fast"}
		m, _ := newTestModel(t, v, c.w, 24)
		head := lines(m.View())[0]
		if c.want == "" {
			if containsAll(head, "≈") {
				t.Errorf("a machine %v behind: header %q says so", c.behind, head)
			}
			continue
		}
		if !containsAll(head, c.want) || draw.Width(head) != c.w {
			t.Errorf("%d columns, %v behind: header %q, want %q in it", c.w, c.behind, head, c.want)
		}
	}
}

// While a lesson holds the clock, the header says why and how to let it
// run before it spends room on the lab time, which stands still anyway,
// and at 80 columns still says why.
func TestHeaderSaysWhyTheClockIsHeld(t *testing.T) {
	for _, c := range []struct {
		w        int
		want     string
		withTime string // "yes", "no", or "" for either
	}{
		{140, "‖ PAUSED · reading — any command resumes", "yes"},
		{100, "‖ PAUSED · reading — any command resumes", ""},
		{80, "‖ PAUSED · reading — any command resumes", ""},
	} {
		v := view.State{Time: demoStart, Clock: view.Clock{Speed: 1, Paused: true, Held: "reading — any command resumes"}, Timing: "classroom",
			Lesson: &view.Lesson{Title: "Retries: backoff, jitter and the dead-letter queue", Step: 1, Steps: 6}}
		m, _ := newTestModel(t, v, c.w, 24)
		head := lines(m.View())[0]
		if !containsAll(head, c.want) || draw.Width(head) != c.w {
			t.Errorf("%d columns: header %q, want %q in it", c.w, head, c.want)
		}
		if shown := containsAll(head, demoStart.Format("15:04:05.0")); c.withTime != "" && shown != (c.withTime == "yes") {
			t.Errorf("%d columns: header %q shows the lab time: %v, want %s", c.w, head, shown, c.withTime)
		}
	}
}

// A title too long for the header beside why the clock is held shows its
// head, before the colon, rather than a word cut in two; a title with no
// colon loses whole words.
func TestHeaderTitleReadsWhole(t *testing.T) {
	for _, c := range []struct {
		title string
		w     int
		want  []string
	}{
		{"Why a queue: the checkout on a bad day", 100, []string{"mqlab │ Why a queue · step 1/5", "‖ PAUSED · the lesson stopped it — space resumes"}},
		{"Why a queue: the checkout on a bad day", 80, []string{"mqlab │ Why a queue · step 1/5", "‖ PAUSED"}},
		{"Why a queue: the checkout on a bad day", 140, []string{"mqlab │ Why a queue: the checkout on a bad day · step 1/5"}},
		{"How many partitions? Two floors and a cost", 100, []string{"mqlab │ How many partitions? · step 1/5"}},
		{"At most once, at least once, and the exactly-once effect", 100, []string{"mqlab │ At most once, at least once… · step 1/5"}},
	} {
		v := view.State{Time: demoStart, Clock: view.Clock{Speed: 1, Paused: true, Held: "the lesson stopped it — space resumes"}, Timing: "classroom",
			Lesson: &view.Lesson{Title: c.title, Step: 1, Steps: 5}}
		m, _ := newTestModel(t, v, c.w, 24)
		head := lines(m.View())[0]
		if !containsAll(head, c.want...) || draw.Width(head) != c.w {
			t.Errorf("%d columns: header %q, want %q in it", c.w, head, c.want)
		}
	}
}

// A decision's hold says so in one word when the header is narrow and
// the lesson's title long: the title gives way before it.
func TestHeaderSaysDecidingAt80(t *testing.T) {
	v := view.State{Time: demoStart, Clock: view.Clock{Speed: 1, Paused: true, Held: "deciding — your commands wait for n"}, Timing: "classroom",
		Lesson: &view.Lesson{Title: "Why a queue: the checkout on a bad day", Step: 3, Steps: 5}}
	for _, c := range []struct {
		w    int
		want string
	}{{100, "‖ PAUSED · deciding — your commands wait for n"}, {80, "‖ PAUSED · deciding"}} {
		m, _ := newTestModel(t, v, c.w, 24)
		head := lines(m.View())[0]
		if !containsAll(head, c.want) || draw.Width(head) != c.w {
			t.Errorf("%d columns: header %q, want %q in it", c.w, head, c.want)
		}
	}
}

// The address a learner points their own client at stays in the header
// at 100 columns while the clock is held: it gives way only to why.
func TestHeaderKeepsTheListenersAddress(t *testing.T) {
	v := view.State{Time: demoStart, Clock: view.Clock{Speed: 1, Paused: true, Held: "your turn — any command resumes"}, Timing: "classroom",
		SQS:    "http://127.0.0.1:19324",
		Lesson: &view.Lesson{Title: "Your own SQS worker: the endpoint, the leader and the timeout", Step: 1, Steps: 4}}
	m, _ := newTestModel(t, v, 100, 30)
	head := lines(m.View())[0]
	if !containsAll(head, "Your own SQS worker · step 1/4", "‖ PAUSED · your turn", "sqs 127.0.0.1:19324") || draw.Width(head) != 100 {
		t.Errorf("header %q lacks the SQS address or why the clock is held", head)
	}
}
