package lessons

import (
	"strings"
	"testing"
	"time"
)

// The timeline around an order names what happened near it; an order lost
// before any was reported gets the first kill's.
func TestChallengeAround(t *testing.T) {
	r := &ChallengeRecord{Keys: []string{"order-1", "order-2", "order-3"}, Timeline: []entry{
		{100 * time.Millisecond, "run 1 of the program starts (pid 7)"},
		{300 * time.Millisecond, "the lab kills run 1 (SIGKILL to its process group): the group has committed 1 orders and the program has reported 0"},
		{2 * time.Second, "run 2 reports processed order-2"},
	}}
	if got := r.around("order-1"); len(got) != 2 || !strings.Contains(got[1], "the lab kills run 1") {
		t.Errorf("around order-1: %q", got)
	}
	if got := r.around("order-3"); len(got) != 1 || !strings.Contains(got[0], "processed order-2") {
		t.Errorf("around order-3: %q", got)
	}
}
