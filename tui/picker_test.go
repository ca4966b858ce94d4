package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/draw"
)

// pickerLessons is a fixed curriculum for the picker's goldens: the
// embedded one changes as lessons are written.
func pickerLessons() []*lessons.Lesson {
	items := []struct {
		title    string
		concepts []string
		minutes  int
	}{
		{"Why a queue", []string{"queue", "decoupling"}, 8},
		{"The backlog arithmetic of the flash sale", []string{"backlog", "throughput"}, 10},
		{"Acks, visibility timeout and competing consumers", []string{"ack", "visibility-timeout", "competing-consumers"}, 12},
		{"At most once, at least once, and the exactly-once effect", []string{"at-most-once", "at-least-once", "exactly-once-effect"}, 12},
		{"Idempotency keys: order 881 is charged once", []string{"idempotency-key"}, 10},
		{"Making your own consumer idempotent", []string{"dedupe-table", "conditional-update"}, 15},
		{"Ordering: per key, not per topic", []string{"ordering", "partition-key", "head-of-line"}, 15},
		{"Retries, backoff and jitter", []string{"retry", "backoff", "jitter", "dlq"}, 12},
		{"Back-pressure", []string{"bounded-queue", "ttl", "shedding"}, 12},
		{"Durability: acks 0, 1 and all", []string{"copies", "acks-0", "acks-1", "acks-all"}, 12},
		{"Dual writes and the outbox", []string{"dual-write", "outbox", "inbox"}, 15},
		{"The log: offsets, segments, retention and replay", []string{"offsets", "segments", "retention"}, 15},
		{"Partition sizing", []string{"partitions", "parallelism"}, 10},
		{"Replication: leader, followers and the high-water mark", []string{"leader", "high-water-mark"}, 18},
		{"Leader failover: epochs, truncation and the repeat", []string{"committed-survives", "epoch", "truncation", "idempotence"}, 15},
		{"Choosing: a work queue, pub/sub or a log", []string{"work-queue", "pub-sub", "log"}, 10},
	}
	var out []*lessons.Lesson
	for i, it := range items {
		out = append(out, &lessons.Lesson{
			ID:       fmt.Sprintf("lesson-%d", i+1),
			Title:    it.title,
			Summary:  "The leader dies holding a batch nobody else has. What was committed survives, the epoch goes up, the returning node cuts its tail, and an idempotent producer's retry is written once.",
			Concepts: it.concepts,
			Minutes:  it.minutes,
			File:     fmt.Sprintf("curriculum/%02d-lesson.md", i+1),
			Steps: []lessons.Step{{Title: "Offsets 0 to 1,499"}, {Title: "A batch only the leader holds"}, {Title: "The epoch"},
				{Title: "The returning broker truncates"}, {Title: "The idempotent producer drops the repeat"}},
		})
	}
	return out
}

func pickerProgress() lessons.Progress {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	return lessons.Progress{Version: 1, Lessons: map[string]*lessons.LessonProgress{
		"lesson-1":  {Finished: true, Updated: t0},
		"lesson-2":  {Finished: true, Updated: t0.Add(time.Hour)},
		"lesson-15": {Step: 2, Updated: t0.Add(2 * time.Hour)},
		"lesson-10": {Step: 1, Updated: t0.Add(30 * time.Minute)},
	}, Challenges: map[string]lessons.ChallengeProgress{
		"at-least-once": {PassedAt: t0, Schedules: 3},
	}}
}

// The picker at the smallest size and a large one: numbers, titles,
// minutes, ✓ done or the step the learner is at, the sandbox, and the
// selected lesson's summary; it opens on the lesson worked on last.
func TestPickerGoldens(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		p := newPicker(draw.NewStyles(draw.DefaultTheme), pickerLessons(), pickerProgress(), "/home/learner/.local/state/mqlab/progress.json")
		p.setSize(sz[0], sz[1])
		got := p.View()
		golden(t, fmt.Sprintf("picker_%dx%d", sz[0], sz[1]), got)
		for i, l := range lines(got) {
			if w := draw.Width(l); w != sz[0] {
				t.Errorf("%dx%d row %d is %d wide", sz[0], sz[1], i, w)
			}
		}
		if n := len(lines(got)); n != sz[1] {
			t.Errorf("%dx%d has %d rows", sz[0], sz[1], n)
		}
	}
}

func TestPickerKeys(t *testing.T) {
	p := newPicker(draw.NewStyles(draw.DefaultTheme), pickerLessons(), pickerProgress(), "")
	p.setSize(80, 24)
	if e := p.selected(); e.les == nil || e.les.ID != "lesson-15" {
		t.Fatalf("opens on %+v, not the lesson worked on last", e.les)
	}
	key := func(s string) pickerAction {
		switch s {
		case "enter":
			return p.update(tea.KeyMsg{Type: tea.KeyEnter})
		case "down":
			return p.update(tea.KeyMsg{Type: tea.KeyDown})
		case "end":
			return p.update(tea.KeyMsg{Type: tea.KeyEnd})
		}
		return p.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)})
	}
	if !p.keys.StartOver.Enabled() || key("r") != pickStartOver {
		t.Error("r does not start lesson 15 over")
	}
	key("down")
	if p.selected().les == nil || p.selected().les.ID != "lesson-16" {
		t.Errorf("one down from 15: %+v", p.selected())
	}
	// The challenges come after the lessons; enter on one says how to run
	// it from a shell, and opens nothing.
	key("down")
	if c := p.selected().ch; c == nil || c.ID != "at-least-once" {
		t.Fatalf("after the lessons: %+v, want the first challenge", p.selected())
	}
	if p.keys.StartOver.Enabled() {
		t.Error("r is offered on a challenge")
	}
	if key("enter") != pickNothing || !strings.Contains(p.status, "mqlab challenge at-least-once -- COMMAND") {
		t.Errorf("enter on a challenge: status %q", p.status)
	}
	if !containsAll(p.View(), "Challenges", "c1", "At least once", "mqlab challenge at-least-once -- COMMAND", "lessons/challenge/at-least-once/README.md") {
		t.Errorf("the challenge's row and box:\n%s", p.View())
	}
	key("end")
	if !p.selected().sandbox() {
		t.Error("the sandbox is not last")
	}
	if p.keys.StartOver.Enabled() {
		t.Error("r is offered on the sandbox")
	}
	if key("enter") != pickOpen {
		t.Error("enter does not open")
	}
	key("?")
	if !p.showHelp || !containsAll(p.View(), "backspace comes back here", "q quits") {
		t.Errorf("? help:\n%s", p.View())
	}
	key("x")
	if p.showHelp {
		t.Error("a key does not close the help")
	}
	if key("q") != pickQuit {
		t.Error("q does not quit")
	}
	p.setSize(60, 20)
	if !containsAll(p.View(), "at least 80×24") {
		t.Error("no notice below 80×24")
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// A click on a lesson's row selects it, a second click opens it; the
// wheel moves the selection; clicks elsewhere do nothing.
func TestPickerMouse(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		p := newPicker(draw.NewStyles(draw.DefaultTheme), pickerLessons(), pickerProgress(), "")
		p.setSize(sz[0], sz[1])
		click := func(x, y int) pickerAction {
			return p.mouse(tea.MouseMsg{X: x, Y: y, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
		}
		rows := lines(p.View())
		clicked := 0
		for y, row := range rows {
			if y < pickerListTop || y >= pickerListTop+len(p.rowEntry) {
				continue // the header, and the box that details the selected lesson
			}
			for i, e := range p.entries {
				if e.les == nil || !strings.Contains(row, " "+e.les.Title) {
					continue
				}
				want := pickNothing
				if p.sel == i {
					want = pickOpen // it was selected already
				}
				if a := click(10, y); a != want {
					t.Errorf("%dx%d: a click on row %d (%s) gave %v, want %v", sz[0], sz[1], y, e.les.ID, a, want)
				}
				if p.selected().les == nil || p.selected().les.ID != e.les.ID {
					t.Errorf("%dx%d: a click on row %d selected %v, want %s", sz[0], sz[1], y, p.selected().les, e.les.ID)
				}
				if a := click(10, y); a != pickOpen {
					t.Errorf("%dx%d: a second click on %s gave %v, want it opened", sz[0], sz[1], e.les.ID, a)
				}
				p.View() // the list is drawn again between clicks
				clicked++
			}
		}
		if clicked < 5 {
			t.Errorf("%dx%d: only %d lessons could be clicked", sz[0], sz[1], clicked)
		}
		for y, row := range lines(p.View()) {
			if strings.Contains(row, "Sandbox") {
				click(10, y)
				if p.selected().les != nil {
					t.Errorf("%dx%d: a click on the sandbox selected %v", sz[0], sz[1], p.selected().les.ID)
				}
			}
		}
		sel := p.sel
		if a := click(10, 0); a != pickNothing || p.sel != sel {
			t.Errorf("a click on the header gave %v and moved the selection", a)
		}
		p.mouse(tea.MouseMsg{Button: tea.MouseButtonWheelUp, Action: tea.MouseActionPress})
		if p.sel != sel-1 {
			t.Errorf("the wheel up selected %d, want %d", p.sel, sel-1)
		}
	}
}

// A finished lesson names the next one, and back in the picker the cursor
// has moved on to the next lesson not done.
func TestPickerMovesOnFromAFinishedLesson(t *testing.T) {
	les := pickerLessons()
	p := newPicker(draw.NewStyles(draw.DefaultTheme), les, pickerProgress(), "")
	if got := p.nextName(les[14]); got != "16 · Choosing: a work queue, pub/sub or a log" {
		t.Errorf("the lesson after the 15th is named %q", got)
	}
	if got := p.nextName(les[len(les)-1]); got != "" {
		t.Errorf("the last lesson names %q as its next", got)
	}
	pr := pickerProgress()
	pr.Lessons["lesson-15"] = &lessons.LessonProgress{Finished: true}
	pr.Lessons["lesson-16"] = &lessons.LessonProgress{Finished: true}
	p.setProgress(pr)
	p.moveOnFrom(les[14])
	if e := p.selected(); e.les == nil || e.les.ID != "lesson-3" {
		t.Errorf("after finishing lesson 15 (16 done too), the cursor is on %+v; want lesson 3, the first not done", e.les)
	}
}
