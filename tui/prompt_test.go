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
