package challenge

import (
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab"
)

// A run let go on after a pause is waited for until it acts on what it
// held: a second after its first line, at once if it ends, zombieWake
// if it does neither. Silent that long, it tested nothing, and a pass
// must not be graded.
func TestZombieSettled(t *testing.T) {
	l, err := lab.New(lab.Options{Nodes: 1, Timing: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ch := Find("in-order")
	for _, c := range []struct {
		name          string
		since         time.Duration
		spoke, ended  bool
		settled, idle bool
	}{
		{"just woken", 100 * time.Millisecond, false, false, false, false},
		{"spoke, a moment ago", 500 * time.Millisecond, true, false, false, false},
		{"spoke a second ago", 1500 * time.Millisecond, true, false, true, false},
		{"ended", 100 * time.Millisecond, false, true, true, false},
		{"silent, not yet given up on", zombieWake - time.Second, false, false, false, false},
		{"silent past zombieWake", zombieWake + time.Second, false, false, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRunner(ch, l, Options{Seed: 1}, time.Minute, "", time.Now(), "")
			pl := &player{runner: r, paused: &instance{n: 1, zombie: true}, resumedAt: time.Now().Add(-c.since), zombieSpoke: c.spoke, zombieEnded: c.ended}
			if got := pl.zombieSettled(); got != c.settled {
				t.Errorf("settled %v, want %v", got, c.settled)
			}
			if idle := r.idlePause != ""; idle != c.idle {
				t.Errorf("idlePause %q; want one: %v", r.idlePause, c.idle)
			}
			if c.idle && (!strings.Contains(r.idlePause, "run 1") || !timelineSays(r, "run 1 has said nothing")) {
				t.Errorf("idlePause %q, timeline %v: both must name run 1 and say it said nothing", r.idlePause, r.rec.Timeline)
			}
		})
	}
}

func timelineSays(r *runner, text string) bool {
	for _, e := range r.rec.Timeline {
		if strings.Contains(e.text, text) {
			return true
		}
	}
	return false
}
