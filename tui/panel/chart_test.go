package panel

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/keys"
	"github.com/mqlab/mqlab/tui/view"
)

// The retry chart's tallest bar is the spread's busiest window, the
// number retry_peak reads, also when one column stands for more lab time
// than the window: a column then shows its busiest window, not all it
// holds. The title gives the same number.
func TestRetryChartPeakIsTheBusiestWindow(t *testing.T) {
	rnd := rand.New(rand.NewSource(7))
	var times []time.Duration
	for range 120 { // full jitter: 120 retries over six seconds
		times = append(times, time.Duration(rnd.Int63n(int64(6*time.Second))))
	}
	const window = 100 * time.Millisecond
	busiest := 0
	for _, a := range times {
		n := 0
		for _, b := range times {
			if b >= a && b-a < window {
				n++
			}
		}
		busiest = max(busiest, n)
	}
	v := view.State{Charts: view.Charts{Retries: []view.RetrySpread{{Name: "retries of pay-1", Times: times, Window: window, Peak: busiest}}}}
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &v
	p := NewChart(ctx)
	p.SetSize(36, 8) // 31 columns for 6 s: about 200 ms each
	got := lines(p.View())
	if want := "peak " + itoa(busiest) + " in 100ms"; !strings.Contains(got[0], want) {
		t.Errorf("title %q, want it to say %q", got[0], want)
	}
	if label := strings.TrimSpace(strings.SplitN(got[1], "┤", 2)[0]); label != itoa(busiest) {
		t.Errorf("the chart's scale tops out at %s; want the busiest 100 ms, %d\n%s", label, busiest, strings.Join(got, "\n"))
	}
	// The same retries counted per column would top out elsewhere: the
	// test draws a case where the two readings differ.
	cols := max(1, 36-3-2)
	per := make([]int, cols)
	maxT := slices.Max(times)
	for _, d := range times {
		per[int(float64(d)/float64(maxT)*float64(cols-1))]++
	}
	if slices.Max(per) == busiest {
		t.Fatalf("a column holds %d, as many as the busiest window: the case shows nothing", slices.Max(per))
	}
}

func itoa(n int) string { return humanNum(float64(n)) }
