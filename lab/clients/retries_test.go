package clients

import (
	"strconv"
	"testing"
	"time"
)

func TestPeakWithin(t *testing.T) {
	at := func(ms ...int) []time.Time {
		base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
		var out []time.Time
		for _, m := range ms {
			out = append(out, base.Add(time.Duration(m)*time.Millisecond))
		}
		return out
	}
	w := 100 * time.Millisecond
	for _, tc := range []struct {
		ms   []int
		want int
	}{
		{nil, 0},
		{[]int{5}, 1},
		{[]int{0, 99}, 2},
		{[]int{0, 100}, 1}, // the window is [t, t+100ms)
		{[]int{1000, 0, 1001, 1002, 50}, 3},
		{[]int{0, 0, 0, 0}, 4},
		{[]int{0, 60, 120, 180, 240}, 2},
	} {
		if got := peakWithin(at(tc.ms...), w); got != tc.want {
			t.Errorf("peakWithin(%v) = %d, want %d", tc.ms, got, tc.want)
		}
	}
}

// The log keeps the most recent retries oldest first and counts every
// one, also those it no longer keeps.
func TestRetryLogKeepsTheMostRecent(t *testing.T) {
	var rl Retries
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	n := retriesKept + 7
	for i := range n {
		rl.Add("payments", Retry{Client: "pay-1", Message: "m" + strconv.Itoa(i), Attempt: 2, Failed: start.Add(time.Duration(i) * time.Second)})
	}
	got := rl.Recent(SnapshotRetries)
	if len(got) != SnapshotRetries || got[0].Message != "m"+strconv.Itoa(n-SnapshotRetries) || got[len(got)-1].Message != "m"+strconv.Itoa(n-1) {
		t.Fatalf("recent: %d retries from %s to %s", len(got), got[0].Message, got[len(got)-1].Message)
	}
	if len(rl.kept) != retriesKept {
		t.Errorf("kept %d, want %d", len(rl.kept), retriesKept)
	}
	if rl.Total("pay-1") != n || rl.Total("payments") != n || rl.Total("nobody") != 0 {
		t.Errorf("totals: pay-1 %d, payments %d, nobody %d; want %d, %d, 0", rl.Total("pay-1"), rl.Total("payments"), rl.Total("nobody"), n, n)
	}
	var empty Retries
	if r := empty.Recent(SnapshotRetries); r != nil {
		t.Errorf("an empty log's recent: %v", r)
	}
}

// retry_peak reads when the retries came back, not when the policy asked
// for them: fifteen retries asked for over a spread-out second read as a
// burst when the queue hands every one back at once, and a retry that
// never came back counts nowhere.
func TestPeakCountsTheRetriesThatArrived(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	schedule := func() *Retries {
		var rl Retries
		for i := range 15 {
			// Full jitter: delays spread evenly over a second.
			rl.Add("payments", Retry{Client: "pay-1", Message: "m" + strconv.Itoa(i), Attempt: 2,
				Failed: t0, Delay: time.Duration(i) * 70 * time.Millisecond})
		}
		return &rl
	}
	honest, eager := schedule(), schedule()
	for i := range 15 {
		m := "m" + strconv.Itoa(i)
		if !honest.Arrived("payments", m, 2, t0.Add(time.Duration(i)*70*time.Millisecond+3*time.Millisecond)) {
			t.Fatalf("retry of %s not found", m)
		}
		// A queue that ignores the delay: back a few ms after the nack.
		eager.Arrived("payments", m, 2, t0.Add(time.Duration(i)*time.Millisecond))
	}
	if got := honest.Peak("payments", RetryWindow); got != 2 {
		t.Errorf("delays honoured: peak %d, want 2", got)
	}
	if got := eager.Peak("pay-1", RetryWindow); got != 15 {
		t.Errorf("delays ignored: peak %d, want all 15", got)
	}
	// An attempt nobody scheduled (a redelivery after a visibility
	// timeout) settles nothing; one scheduled but not back is not counted.
	pending := schedule()
	if pending.Arrived("payments", "m3", 3, t0) || pending.Arrived("other", "m3", 2, t0) {
		t.Error("an attempt no retry asked for settled one")
	}
	if got := pending.Peak("payments", RetryWindow); got != 0 {
		t.Errorf("nothing came back yet: peak %d, want 0", got)
	}
}

// A worker that was already waiting when its retries fell due has them
// back when due, however late the machine handed them over: fifteen
// retries due 70 ms apart and received together, a second late, still
// read as spread. A receive begun after they fell due takes them when it
// does.
func TestPeakOfRetriesAWaitingWorkerGotLate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	waiting, busy := &Retries{}, &Retries{}
	for _, rl := range []*Retries{waiting, busy} {
		for i := range 15 {
			rl.Add("payments", Retry{Client: "pay-1", Message: "m" + strconv.Itoa(i), Attempt: 2,
				Failed: t0, Delay: time.Duration(i) * 70 * time.Millisecond})
		}
	}
	late := t0.Add(2 * time.Second)
	for i := range 15 {
		m := "m" + strconv.Itoa(i)
		waiting.ArrivedAsked("payments", m, 2, late, t0)
		busy.ArrivedAsked("payments", m, 2, late, late)
	}
	if got := waiting.Peak("payments", RetryWindow); got != 2 {
		t.Errorf("a worker waiting since before they were due: peak %d, want 2", got)
	}
	if got := busy.Peak("payments", RetryWindow); got != 15 {
		t.Errorf("a worker that asked only after they were all due: peak %d, want 15", got)
	}
}
