package challenge

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab"
)

// A run let go on after a pause is waited for until it acts on what it
// held: a second after its first line, at once if it ends, zombieWake
// if it does neither. One that ends or is given up on without a line
// may have held nothing, unless the lab was sure it held a record it had
// not finished: then a pass is not graded.
func TestZombieSettled(t *testing.T) {
	l, err := lab.New(lab.Options{Nodes: 1, Timing: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ch := Find("in-order")
	for _, c := range []struct {
		name          string
		since, spoke  time.Duration // since it went on; since its first line (0: none)
		ended, sure   bool
		unread        bool // its output not all read yet
		settled, idle bool
	}{
		{"just woken", 100 * time.Millisecond, 0, false, false, false, false, false},
		{"spoke a moment ago", 2 * time.Second, 500 * time.Millisecond, false, false, false, false, false},
		{"spoke a second ago", 2 * time.Second, 1500 * time.Millisecond, false, false, false, true, false},
		{"spoke late, a moment ago", zombieWake - 100*time.Millisecond, 200 * time.Millisecond, false, false, false, false, false},
		{"spoke and ended", time.Second, 500 * time.Millisecond, true, false, false, true, false},
		{"ended without a line", 100 * time.Millisecond, 0, true, false, false, true, true},
		{"ended, its last lines maybe on their way", 100 * time.Millisecond, 0, true, false, true, false, false},
		{"ended without a line, sure it held", 100 * time.Millisecond, 0, true, true, false, true, false},
		{"silent, not yet given up on", zombieWake - time.Second, 0, false, false, false, false, false},
		{"silent past zombieWake", zombieWake + time.Second, 0, false, false, false, true, true},
		{"silent past zombieWake, sure it held", zombieWake + time.Second, 0, false, true, false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRunner(ch, l, Options{Seed: 1}, time.Minute, "", time.Now(), "")
			read := make(chan struct{})
			if !c.unread {
				close(read)
			}
			pl := &player{runner: r, paused: &instance{n: 1, zombie: true, read: read}, resumedAt: time.Now().Add(-c.since),
				zombieEnded: c.ended, zombieEndedAt: time.Now().Add(-c.since), pauseSure: c.sure}
			if c.spoke > 0 {
				pl.spokeAt = time.Now().Add(-c.spoke)
			}
			if got := pl.zombieSettled(); got != c.settled {
				t.Errorf("settled %v, want %v", got, c.settled)
			}
			if idle := r.silentZombie != ""; idle != c.idle {
				t.Errorf("silentZombie %q; want one: %v", r.silentZombie, c.idle)
			}
			if c.idle && !strings.Contains(r.silentZombie, "run 1") {
				t.Errorf("silentZombie %q must name run 1", r.silentZombie)
			}
			if c.settled && c.spoke == 0 && !c.ended && !timelineSays(r, "run 1 has said nothing") {
				t.Errorf("timeline %v: it must say run 1 said nothing", r.rec.Timeline)
			}
		})
	}
}

// A woken run given up on for its silence that speaks after all has
// acted: its silence no longer stands against a pass.
func TestZombieSpeaksLate(t *testing.T) {
	l, err := lab.New(lab.Options{Nodes: 1, Timing: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r := newRunner(Find("in-order"), l, Options{Seed: 1}, time.Minute, "", time.Now(), "")
	pl := &player{runner: r, paused: &instance{n: 1, zombie: true}, cur: &instance{n: 2}, resumedAt: time.Now().Add(-zombieWake - time.Second)}
	if !pl.zombieSettled() || r.silentZombie == "" {
		t.Fatalf("silent past zombieWake: settled %v, silentZombie %q; want settled, and a reason", pl.zombieSettled(), r.silentZombie)
	}
	if err := pl.line(context.Background(), runLine{run: 1, text: "processed account-3"}); err != nil {
		t.Fatal(err)
	}
	if r.silentZombie != "" {
		t.Errorf("after its line: silentZombie %q; want none", r.silentZombie)
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
