package source

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/tui/internal/labtest"
	"github.com/mqlab/mqlab/tui/view"
)

func TestViewOfCharts(t *testing.T) {
	snap := labtest.FlashSale()
	v := ViewOf(&snap)
	s := v.Charts.Series
	if len(s) != 1 || s[0].Name != "lag(billing)" {
		t.Fatalf("series %v: want lag(billing), which moved, and not depth(receipts), which stayed at 0", names(s))
	}
	if s[0].Unit != "offsets" || s[0].Every != lab.SeriesEvery || len(s[0].Values) != 80 || s[0].Values[40] != 2400 {
		t.Errorf("lag(billing): %s every %v, %d values, peak %v; want offsets every %v, 80 values, 2400 at step 40",
			s[0].Unit, s[0].Every, len(s[0].Values), slices.Max(s[0].Values), lab.SeriesEvery)
	}
	r := v.Charts.Retries
	if len(r) != 2 || r[0].Name != "retries of w-plain" || r[1].Name != "retries of w-jitter" {
		t.Fatalf("spreads %+v: want one per worker", r)
	}
	// Without jitter every message retries at 1s, 3s and 7s after its
	// first failure (plus the time the attempts took): three waves.
	waves := map[time.Duration]int{}
	for _, d := range r[0].Times {
		waves[d.Round(time.Second)]++
	}
	if len(r[0].Times) != 90 || waves[time.Second] != 30 || waves[3*time.Second] != 30 || waves[7*time.Second] != 30 {
		t.Errorf("retries without jitter come back at %v; want 30 each at 1s, 3s, 7s", waves)
	}
	if r[0].Peak != 30 || r[0].Window != lab.RetryWindow {
		t.Errorf("the waves' peak: %d in %v; want 30 in %v, as retry_peak reads them", r[0].Peak, r[0].Window, lab.RetryWindow)
	}
	spread := map[time.Duration]bool{}
	for _, d := range r[1].Times {
		spread[d.Round(100*time.Millisecond)] = true
	}
	if len(spread) < 20 {
		t.Errorf("retries with full jitter fall on %d tenths of a second; want them spread over many", len(spread))
	}
	// When nothing moved, every series is drawn: flat at zero.
	calm := lab.Snapshot{Series: snap.Series[:1]}
	if got := ViewOf(&calm).Charts.Series; len(got) != 1 || got[0].Name != "depth(receipts)" {
		t.Errorf("an empty queue alone: %v, want depth(receipts) drawn", names(got))
	}
	// The spread is when retries came back, as retry_peak counts them: a
	// queue that hands a nacked message back before its backoff shows
	// where it really arrived, and a retry not back yet shows nowhere.
	early := lab.Snapshot{Retries: []lab.RetryState{
		{Client: "w", Message: "m1", Attempt: 2, Failed: labtest.DemoStart, Delay: time.Second, Arrived: labtest.DemoStart.Add(100 * time.Millisecond)},
		{Client: "w", Message: "m2", Attempt: 2, Failed: labtest.DemoStart, Delay: time.Second},
	}}
	if got := ViewOf(&early).Charts.Retries; len(got) != 1 || !slices.Equal(got[0].Times, []time.Duration{100 * time.Millisecond}) {
		t.Errorf("a retry due at 1s that came back at 100ms, and one not back: %+v; want one time, 100ms", got)
	}
	// Nothing back yet: nothing to draw.
	late := lab.Snapshot{Retries: []lab.RetryState{{Client: "w", Message: "m", Attempt: 3, Failed: labtest.DemoStart, Delay: time.Second}}}
	if got := ViewOf(&late).Charts.Retries; len(got) != 0 {
		t.Errorf("a retry not back gave %+v, want nothing to draw", got)
	}
	// Two batches of fifteen that failed half a second apart, without
	// jitter, come back as two waves half a second apart, as the gateway
	// sees them and retry_peak counts them: fifteen at a time, not thirty.
	var two lab.Snapshot
	for b := range 2 {
		failed := labtest.DemoStart.Add(time.Duration(b) * 500 * time.Millisecond)
		for m := range 15 {
			id := fmt.Sprintf("b%d-%d", b, m)
			two.Retries = append(two.Retries,
				lab.RetryState{Client: "pay-1", Message: id, Attempt: 2, Failed: failed, Delay: time.Second, Arrived: failed.Add(time.Second)},
				lab.RetryState{Client: "pay-1", Message: id, Attempt: 3, Failed: failed.Add(time.Second), Delay: 2 * time.Second, Arrived: failed.Add(3 * time.Second)})
		}
	}
	got := ViewOf(&two).Charts.Retries
	if len(got) != 1 {
		t.Fatalf("two batches of one worker: %+v, want one spread", got)
	}
	at := map[time.Duration]int{}
	for _, d := range got[0].Times {
		at[d]++
	}
	want := map[time.Duration]int{time.Second: 15, 1500 * time.Millisecond: 15, 3 * time.Second: 15, 3500 * time.Millisecond: 15}
	if !maps.Equal(at, want) || got[0].Peak != 15 {
		t.Errorf("two batches half a second apart: back at %v, peak %d; want %v, peak 15", at, got[0].Peak, want)
	}
}

// A running check shows as a job with its progress.
func TestDrainJob(t *testing.T) {
	snap := lab.Snapshot{Drain: &lab.DrainState{Done: 2, Total: 5, Reading: "orders/2"}}
	jobs := ViewOf(&snap).Jobs
	if len(jobs) != 1 || jobs[0] != (view.Job{Name: "check: draining orders/2", Done: 2, Total: 5}) {
		t.Errorf("jobs %+v, want the check draining orders/2 at 2 of 5", jobs)
	}
}

// On a live lab, a group that falls behind and catches up draws as a
// series that rose and came back to zero, and the outbox rows of the
// orders service reach the services panel.
func TestLabSourceChartsAndTables(t *testing.T) {
	checkLeaks(t)
	_, src := newTestLab(t, "topic create orders partitions=1", "produce orders count=30",
		"consumer start c1 group=billing topic=orders rate=40/s",
		"service start orders mode=outbox", "order 881 count=2")
	v := eventually(t, src, "lag(billing) to rise and drain back to 0", func(v view.State) bool {
		for _, s := range v.Charts.Series {
			if s.Name == "lag(billing)" && len(s.Values) > 0 && slices.Max(s.Values) >= 5 && s.Values[len(s.Values)-1] == 0 {
				return true
			}
		}
		return false
	})
	if s := v.Charts.Series[0]; s.Every != lab.SeriesEvery || s.Unit != "offsets" {
		t.Errorf("series %s every %v in %q, want every %v in offsets", s.Name, s.Every, s.Unit, lab.SeriesEvery)
	}
	var outbox *view.Table
	for i := range v.Tables {
		if v.Tables[i].Name == "orders.outbox" {
			outbox = &v.Tables[i]
		}
	}
	if outbox == nil || outbox.Total != 2 || len(outbox.Rows) != 2 || outbox.Columns[2] != "status" {
		t.Fatalf("orders.outbox %+v: want its 2 rows, status third", outbox)
	}
}

// On a live lab, a worker that retries without jitter draws as waves:
// every message's retries fall due at the same times after its first
// failure.
func TestLabSourceRetryWaves(t *testing.T) {
	checkLeaks(t)
	l, src := newTestLab(t, "queue create payments visibility=30s dlq=payments-dlq",
		"send payments count=10 as=checkout",
		"worker start pay-1 queue=payments fail=transient:1 retry=backoff base=200ms jitter=none max-attempts=3",
		"wait depth(payments-dlq) == 10 timeout=20s")
	v := eventually(t, src, "pay-1's 20 retries", func(v view.State) bool {
		return len(v.Charts.Retries) == 1 && len(v.Charts.Retries[0].Times) == 20
	})
	r := v.Charts.Retries[0]
	if r.Name != "retries of pay-1" {
		t.Errorf("spread %q, want retries of pay-1", r.Name)
	}
	first, second := 0, 0
	for _, d := range r.Times {
		switch {
		case d >= 200*time.Millisecond && d < 450*time.Millisecond: // 200ms after the first failure
			first++
		case d >= 600*time.Millisecond && d < 1200*time.Millisecond: // 200ms, the attempt, then 400ms
			second++
		}
	}
	if first != 10 || second != 10 {
		t.Errorf("retries at %v: want two waves of 10, near 200ms and 600ms", r.Times)
	}
	// The chart's peak is the lab's own reading of the same retries.
	expect, err := command.Parse("expect retry_peak(pay-1) == 0")
	if err != nil {
		t.Fatal(err)
	}
	peak, err := l.Value(context.Background(), expect.(command.Expect).Cond.Left)
	if err != nil {
		t.Fatal(err)
	}
	if strconv.Itoa(r.Peak) != peak {
		t.Errorf("the chart's peak is %d, retry_peak(pay-1) reads %s: they must agree", r.Peak, peak)
	}
}

func names(ss []view.Series) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}
