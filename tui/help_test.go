package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// helpPages is everything the '?' screen shows, scrolled from its top to
// its end with ↓.
func helpPages(m *Model) string {
	press(m, "?")
	var all strings.Builder
	last := ""
	for range 60 {
		v := ansi.Strip(m.View())
		if v == last {
			break
		}
		all.WriteString(v)
		last = v
		press(m, "down")
	}
	press(m, "esc")
	return all.String()
}

// At 80x24 the '?' screen holds every key of the lab screen: what does
// not fit scrolls with ↓, and says so.
func TestHelpListsEveryKeyAt80x24(t *testing.T) {
	m, _ := newTestModel(t, sceneEnd(t), 80, 24)
	m.ctx.Keys.Lessons.SetEnabled(true) // a screen opened from the lessons
	press(m, "?")
	if first := ansi.Strip(m.View()); !strings.Contains(first, "more (↑/↓ scroll)") {
		t.Errorf("the help at 80x24 does not say that more follows:\n%s", first)
	}
	press(m, "esc")
	all := helpPages(m)
	for _, want := range []string{"←/→ select node", "1–9", "kill node", "kill the leader", "restart node", "isolate node",
		"heal all links", "pause/resume", "+/-", "Kafka on/off", "n/p", "a–d", "0–9", "a hint for the task", ": ", "? ",
		"[/]", "{/}", "esc", "tab", "shift+tab", "↑/↓", "f ", "backspace", "q ", "What the symbols mean", "? or esc closes this"} {
		if !strings.Contains(all, want) {
			t.Errorf("the help at 80x24 never shows %q", want)
		}
	}
}

// A follower's '?' lists what a follower can do — watch, step through
// history, answer — and no key that would change the teacher's lab.
func TestFollowerHelpListsOnlyWhatAFollowerCanDo(t *testing.T) {
	src := newFakeSource(sceneEnd(t))
	m := New(src, Options{Follow: true})
	t.Cleanup(m.Close)
	m.Update(teaSize(80, 24))
	all := helpPages(m)
	for _, want := range []string{"[/]", "{/}", "a–d", "0–9", "tab", ": ", "q ", ":help"} {
		if !strings.Contains(all, want) {
			t.Errorf("a follower's help never shows %q", want)
		}
	}
	for _, not := range []string{"kill node", "kill the leader", "restart node", "isolate node", "heal all links",
		"pause/resume", "speed", "Kafka on/off", "next/prev step", "a hint for the task", "back to the lessons"} {
		if strings.Contains(all, not) {
			t.Errorf("a follower's help lists %q, which a follower cannot do", not)
		}
	}
}
