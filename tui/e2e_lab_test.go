package tui

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
)

// The screen over a real lab: select the leader of orders/0 with its
// number key, kill it with k, and the partition's header names the new
// leader and its epoch.
func TestEndToEndRealLab(t *testing.T) {
	checkLeaks(t)
	_, src := newTestLab(t, "topic create orders partitions=3", "elect n2 orders/0")
	before := partitionOf(src.View(), "orders/0").Epoch

	m := New(src, Options{Commands: LabCommands()})
	t.Cleanup(m.Close)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))

	waitText(t, tm, "orders/0  leader ▲ n2  epoch "+strconv.FormatUint(before, 10))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("2")})
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("k")})

	// n1 or n3 takes over, one epoch up or more; the header says so.
	header := regexp.MustCompile(`orders/0  leader ▲ (n1|n3)  epoch (\d+) \(new, was (\d+)\)`)
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, sm := range header.FindAllSubmatch(b, -1) {
			now, _ := strconv.ParseUint(string(sm[2]), 10, 64)
			if now > before {
				return true
			}
		}
		return false
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(20*time.Millisecond))

	if p := partitionOf(src.View(), "orders/0"); p.Leader == "n2" || p.Leader == "" {
		t.Errorf("orders/0 after the kill: leader %q", p.Leader)
	}
	if n2 := nodeOf(src.View(), "n2"); n2.Up {
		t.Error("k did not kill n2")
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}
