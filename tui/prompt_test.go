package tui

import (
	"slices"
	"strings"
	"testing"
)

func TestLabCommands(t *testing.T) {
	cmds := LabCommands()
	for _, want := range []string{"kill", "topic create", "consumer start", "worker stop", "service start", "drop next reply to", "drop next ack from", "speed", "help"} {
		if !slices.Contains(cmds, want) {
			t.Errorf("no %q in %q", want, cmds)
		}
	}
	for _, c := range cmds {
		if strings.ContainsAny(c, "[]|") || strings.ToLower(c) != c {
			t.Errorf("%q is not a command name", c)
		}
	}
}

// A prediction that missed is marked as a miss on the status line, not
// with the ✓ of a command that ran; a teacher's reveal and a right answer
// keep their ✓.
func TestMissedPredictionIsMarked(t *testing.T) {
	for _, c := range []struct {
		line, out string
		missed    bool
	}{
		{"predict 60", "the answer is 36 s (± 10 %)", true},
		{"lesson predict c", "the answer is b) when the deadline passes", true},
		{"predict 36", "you predicted it: 36 s (± 10 %)", false},
		{"reveal", "the answer is b) when the deadline passes", false},
		{"produce orders", "the answer is in the log", false},
	} {
		if got := missedPrediction(c.line, c.out); got != c.missed {
			t.Errorf("%q → %q: missed %v, want %v", c.line, c.out, got, c.missed)
		}
	}
}
