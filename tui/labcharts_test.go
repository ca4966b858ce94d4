package tui

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab"
)

// flashSale is a lab snapshot after a burst of orders: billing's lag rose
// while the load ran faster than the consumer, then drained; a queue
// stayed empty; two workers retried the same failures, one without
// jitter and one with full jitter.
func flashSale() lab.Snapshot {
	t0 := demoStart.Add(-20 * time.Second)
	var lag, empty []int64
	for i := 0; i < 80; i++ { // 20 s of lab time: 10 s of load, then the drain
		v := int64(i * 60)
		if i >= 40 {
			v = max(0, 2400-int64(i-40)*70)
		}
		lag = append(lag, v)
		empty = append(empty, 0)
	}
	snap := lab.Snapshot{Time: demoStart, Series: []lab.SeriesState{
		{Name: "depth(receipts)", Func: "depth", Of: "receipts", Unit: "msgs", Start: t0, Every: lab.SeriesEvery, Values: empty},
		{Name: "lag(billing)", Func: "lag", Of: "billing", Unit: "msgs", Start: t0, Every: lab.SeriesEvery, Values: lag},
	}}
	rnd := rand.New(rand.NewSource(3))
	for m := 0; m < 30; m++ {
		for _, c := range []string{"w-plain", "w-jitter"} {
			failed := t0 // every message failed at once: the payments service went down
			for a := 2; a <= 4; a++ {
				d := time.Second << (a - 2)
				if c == "w-jitter" {
					d = time.Duration(rnd.Int63n(int64(d)))
				}
				snap.Retries = append(snap.Retries, lab.RetryState{Client: c, Message: fmt.Sprintf("%s-%d", c, m), Attempt: a, Failed: failed, Delay: d})
				failed = failed.Add(d + 10*time.Millisecond) // the retry ran and failed again
			}
		}
	}
	return snap
}

func TestViewOfCharts(t *testing.T) {
	snap := flashSale()
	v := viewOf(&snap, truncTimes{})
	s := v.Charts.Series
	if len(s) != 1 || s[0].Name != "lag(billing)" {
		t.Fatalf("series %v: want lag(billing), which moved, and not depth(receipts), which stayed at 0", names(s))
	}
	if s[0].Unit != "msgs" || s[0].Every != lab.SeriesEvery || len(s[0].Values) != 80 || s[0].Values[40] != 2400 {
		t.Errorf("lag(billing): %s every %v, %d values, peak %v; want msgs every %v, 80 values, 2400 at step 40",
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
		t.Errorf("retries without jitter fire at %v; want 30 each at 1s, 3s, 7s", waves)
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
	if got := viewOf(&calm, truncTimes{}).Charts.Series; len(got) != 1 || got[0].Name != "depth(receipts)" {
		t.Errorf("an empty queue alone: %v, want depth(receipts) drawn", names(got))
	}
	// A message whose first retry left the window is not measured.
	late := lab.Snapshot{Retries: []lab.RetryState{{Client: "w", Message: "m", Attempt: 3, Failed: demoStart, Delay: time.Second}}}
	if got := viewOf(&late, truncTimes{}).Charts.Retries; len(got) != 0 {
		t.Errorf("a lone attempt 3 gave %+v, want nothing to draw", got)
	}
}

func names(ss []Series) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

// The chart of a flash sale: billing's lag rises while the load runs and
// drains after, on an axis in lab seconds; retries come in waves without
// jitter and spread with it. At the width of the 80- and 120-column
// screens.
func TestChartGoldens(t *testing.T) {
	snap := flashSale()
	v := viewOf(&snap, truncTimes{})
	ctx := newContext(newFakeSource(v), NewStyles(DefaultTheme), DefaultKeyMap())
	ctx.State = &v
	for _, c := range []struct{ w, h int }{{38, 10}, {58, 18}, {58, 5}} {
		p := newChartPanel(ctx)
		p.SetSize(c.w, c.h)
		got := p.View()
		checkSize(t, "chart", got, c.w, c.h)
		golden(t, fmtName("chart_flash", c.w, c.h), got)
	}
}

// squeeze keeps every peak and ends with the newest value.
func TestSqueeze(t *testing.T) {
	vals := []float64{1, 9, 2, 3, 4, 0, 7}
	if got, want := squeeze(vals, 3), []float64{1, 9, 7}; !slices.Equal(got, want) {
		t.Errorf("squeeze by 3: %v, want %v", got, want)
	}
	if got := squeeze(vals, 1); !slices.Equal(got, vals) {
		t.Errorf("squeeze by 1: %v, want it unchanged", got)
	}
}

// A running check shows as a job with its progress.
func TestDrainJob(t *testing.T) {
	snap := lab.Snapshot{Drain: &lab.DrainState{Done: 2, Total: 5, Reading: "orders/2"}}
	jobs := viewOf(&snap, truncTimes{}).Jobs
	if len(jobs) != 1 || jobs[0] != (Job{Name: "check: draining orders/2", Done: 2, Total: 5}) {
		t.Errorf("jobs %+v, want the check draining orders/2 at 2 of 5", jobs)
	}
}

// Jobs show their progress in the header; at 80 columns they shrink so
// the clock stays in view.
func TestHeaderJobs(t *testing.T) {
	v := ViewState{Time: demoStart, Clock: Clock{Speed: 1}, Timing: "classroom", Jobs: []Job{
		{Name: "load orders", Done: 800, Total: 2000},
		{Name: "check: draining orders/2", Done: 2, Total: 5},
	}}
	for _, c := range []struct {
		w    int
		want []string
	}{
		{120, []string{"load orders ▰▰▰▱▱▱▱▱ 40%", "check: draining orders/2 ▰▰▰▱▱▱▱▱ 40%", "▶ running", demoStart.Format("15:04:05.0"), "classroom"}},
		{80, []string{"load orders ▰▰▱▱▱ 40%", "+1 more", "▶ running", demoStart.Format("15:04:05.0")}},
	} {
		m, _ := newTestModel(t, v, c.w, 24)
		head := lines(m.View())[0]
		if textWidth(head) != c.w {
			t.Errorf("%d columns: the header is %d wide", c.w, textWidth(head))
		}
		if !containsAll(head, c.want...) {
			t.Errorf("%d columns: header %q, want %q in it", c.w, head, c.want)
		}
	}
}

// A screen watching a run that has ended says so in its header, not that
// the lab runs.
func TestHeaderRunOver(t *testing.T) {
	v := ViewState{Time: demoStart, Clock: Clock{Speed: 1}, Timing: "fast"}
	over := false
	m := New(newFakeSource(v), Options{Over: func() bool { return over }})
	t.Cleanup(m.Close)
	m.Update(teaSize(100, 24))
	if head := lines(m.View())[0]; !containsAll(head, "▶ running") || containsAll(head, "run over") {
		t.Errorf("before the end: %q", head)
	}
	over = true
	if head := lines(m.View())[0]; !containsAll(head, "■ run over") || containsAll(head, "running") {
		t.Errorf("after the end: %q", head)
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
	v := eventually(t, src, "lag(billing) to rise and drain back to 0", func(v ViewState) bool {
		for _, s := range v.Charts.Series {
			if s.Name == "lag(billing)" && len(s.Values) > 0 && slices.Max(s.Values) >= 5 && s.Values[len(s.Values)-1] == 0 {
				return true
			}
		}
		return false
	})
	if s := v.Charts.Series[0]; s.Every != lab.SeriesEvery || s.Unit != "msgs" {
		t.Errorf("series %s every %v in %q, want every %v in msgs", s.Name, s.Every, s.Unit, lab.SeriesEvery)
	}
	var outbox *Table
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
	_, src := newTestLab(t, "queue create payments visibility=30s dlq=payments-dlq",
		"send payments count=10 as=checkout",
		"worker start pay-1 queue=payments fail=transient:1 retry=backoff base=200ms jitter=none max-attempts=3",
		"wait depth(payments-dlq) == 10 timeout=20s")
	v := eventually(t, src, "pay-1's 20 retries", func(v ViewState) bool {
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
}

// The history ring keeps one copy of a series that did not move between
// two states, and its own copy of one that did.
func TestHistorySharesSeries(t *testing.T) {
	snap := flashSale()
	a, b := viewOf(&snap, truncTimes{}), viewOf(&snap, truncTimes{})
	snap.Series[1].Values = append(snap.Series[1].Values, 5)
	c := viewOf(&snap, truncTimes{})
	h := newHistory(10)
	h.push(&a)
	h.push(&b)
	h.push(&c)
	if &a.Charts.Series[0].Values[0] != &b.Charts.Series[0].Values[0] {
		t.Error("two equal series are kept twice")
	}
	if &a.Charts.Retries[0].Times[0] != &b.Charts.Retries[0].Times[0] {
		t.Error("two equal spreads are kept twice")
	}
	if &b.Charts.Series[0].Values[0] == &c.Charts.Series[0].Values[0] || len(c.Charts.Series[0].Values) != 81 {
		t.Error("a series that moved shares the values of the one before")
	}
}
