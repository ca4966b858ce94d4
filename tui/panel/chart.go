package panel

import (
	"fmt"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/view"
)

// Chart draws what a picture says better than numbers: backlog and
// lag over time (a flash sale's queue growing, then draining), and when
// retries came back (backoff without jitter comes in waves; with full jitter,
// spread out).
type Chart struct {
	ctx  *Context
	w, h int
}

func NewChart(ctx *Context) *Chart { return &Chart{ctx: ctx} }

func (p *Chart) Title() string    { return "Chart" }
func (p *Chart) SetSize(w, h int) { p.w, p.h = w, h }
func (p *Chart) Scroll(int)       {}

// Update takes no key: the chart fits its panel and does not scroll.
func (p *Chart) Update(tea.Msg, bool) bool { return false }

// ShortHelp and FullHelp are empty: the chart has no keys.
func (p *Chart) ShortHelp() []key.Binding  { return nil }
func (p *Chart) FullHelp() [][]key.Binding { return nil }

var eighths = []string{" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"}

func (p *Chart) View() string {
	st := p.ctx.Styles
	c := p.ctx.State.Charts
	n := len(c.Series) + len(c.Retries)
	if n == 0 {
		return draw.Block([]string{st.Muted.Render("Nothing to chart yet: a load, a lagging group"),
			st.Muted.Render("or retries draw here.")}, p.w, p.h)
	}
	axes := func() int { // one time axis under the series, one under the spreads
		a := 0
		if len(c.Series) > 0 {
			a++
		}
		if len(c.Retries) > 0 {
			a++
		}
		return a
	}
	k := (p.h - n - axes()) / n
	// Too many charts for the height: the last series go first, down to
	// one (retries are rare and worth their rows when there are any), then
	// the last spreads.
	for k < 1 && n > 1 {
		if len(c.Series) > 1 || len(c.Retries) == 0 {
			c.Series = c.Series[:len(c.Series)-1]
		} else {
			c.Retries = c.Retries[:len(c.Retries)-1]
		}
		n--
		k = (p.h - n - axes()) / n
	}
	k = max(1, min(k, 12))
	var rows []string
	if len(c.Series) > 0 {
		rows = append(rows, p.series(c.Series, k)...)
	}
	if len(c.Retries) > 0 {
		rows = append(rows, p.retries(c.Retries, k)...)
	}
	return draw.Block(rows, p.w, p.h)
}

// series draws each series as bars k rows tall, on one time axis: the
// newest value at the right edge, and when a series is longer than the
// width, every column the highest of the values it stands for (a peak
// never disappears by being squeezed).
func (p *Chart) series(ss []view.Series, k int) []string {
	st := p.ctx.Styles
	yw := 1
	longest, every := 0, time.Duration(0)
	peaks := make([]float64, len(ss))
	for i, s := range ss {
		for _, v := range s.Values {
			peaks[i] = math.Max(peaks[i], v)
		}
		yw = max(yw, len(humanNum(peaks[i])))
		if len(s.Values) > longest {
			longest, every = len(s.Values), s.Every
		}
	}
	pw := max(1, p.w-yw-2)
	per := max(1, (longest+pw-1)/pw)  // values per column
	cols := (longest + per - 1) / per // columns the longest series takes
	var rows []string
	for i, s := range ss {
		vals := squeeze(s.Values, per)
		peak := peaks[i]
		var last float64
		if len(s.Values) > 0 {
			last = s.Values[len(s.Values)-1]
		}
		var t draw.Line
		t.Add(&st.Bold, s.Name)
		nums := fmt.Sprintf("  now %s · peak %s", humanNum(last), humanNum(peak))
		if s.Unit != "" && t.Width()+draw.Width(nums)+1+draw.Width(s.Unit) <= p.w {
			nums += " " + s.Unit // the numbers come first: a narrow panel leaves out the unit
		}
		t.Add(&st.Muted, nums)
		rows = append(rows, t.Fit(p.w))
		for r := k - 1; r >= 0; r-- {
			var l draw.Line
			label := ""
			switch {
			case r == k-1 && peak > 0:
				label = humanNum(peak)
			case r == 0:
				label = "0"
			}
			l.Add(&st.Faint, fmt.Sprintf("%*s┤", yw, label))
			l.Pad(yw + 1 + cols - len(vals)) // every series ends now, under the axis's "now"
			l.Add(&st.Accent, barsRow(vals, peak, k, r, "·"))
			rows = append(rows, l.Fit(p.w))
		}
	}
	return append(rows, p.timeAxis(yw, cols, time.Duration(cols*per)*every))
}

// timeAxis labels the cols columns of bars in lab time: how long ago the
// first one was, and "now" under the last (or just after it, while the
// series are shorter than their labels).
func (p *Chart) timeAxis(yw, cols int, span time.Duration) string {
	st := p.ctx.Styles
	var ax draw.Line
	ax.Add(&st.Faint, draw.Spaces(yw)+"└")
	if span <= 0 {
		return ax.Fit(p.w)
	}
	d := span.Round(time.Second)
	if span < time.Second {
		d = span
	}
	left := "−" + shortDur(d)
	right := "now"
	word := " lab time "
	gap := cols - draw.Width(left) - draw.Width(right)
	switch {
	case gap >= draw.Width(word)+2:
		dash := gap - draw.Width(word)
		ax.Add(&st.Faint, left+strings.Repeat("─", dash/2)+word+strings.Repeat("─", dash-dash/2)+right)
	default:
		ax.Add(&st.Faint, left+strings.Repeat("─", max(1, gap))+right+" (lab time)")
	}
	return ax.Fit(p.w)
}

// squeeze makes every per values one, the highest of them, counting from
// the newest so the last column is always the latest.
func squeeze(vals []float64, per int) []float64 {
	if per <= 1 {
		return vals
	}
	n := (len(vals) + per - 1) / per
	out := make([]float64, n)
	for i := range out {
		hi := len(vals) - (n-1-i)*per
		lo := max(0, hi-per)
		for _, v := range vals[lo:hi] {
			out[i] = math.Max(out[i], v)
		}
	}
	return out
}

// barsRow is row r (0 at the bottom) of a bar chart k rows tall; zero
// is what a value of 0 shows on the bottom row (a series draws its
// samples of 0 as dots, so that 0 reads apart from "not sampled yet").
func barsRow(vals []float64, peak float64, k, r int, zero string) string {
	var b strings.Builder
	for _, v := range vals {
		level := 0
		if peak > 0 {
			level = int(math.Round(v / peak * float64(k*8)))
		}
		switch {
		case level >= (r+1)*8:
			b.WriteString("█")
		case level > r*8:
			b.WriteString(eighths[level-r*8])
		case r == 0 && v > 0:
			b.WriteString("▁") // a non-zero value never vanishes
		case r == 0:
			b.WriteString(zero)
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// retries draws each spread as bars k rows tall on one time axis. A
// column's bar is the most retries that came back within one of the
// spread's windows starting in it, so the tallest bar is the spread's
// Peak, the number retry_peak reads, however many windows a column
// stands for; the title gives it too.
func (p *Chart) retries(spreads []view.RetrySpread, k int) []string {
	st := p.ctx.Styles
	var maxT time.Duration
	for _, s := range spreads {
		for _, t := range s.Times {
			if t > maxT {
				maxT = t
			}
		}
	}
	yw := 3
	pw := max(1, p.w-yw-2)
	counts := make([][]float64, len(spreads))
	var peak float64
	for i, s := range spreads {
		counts[i] = make([]float64, pw)
		times := slices.Sorted(slices.Values(s.Times))
		within := windowCounts(times, s.Window)
		for j, t := range times {
			b := 0
			if maxT > 0 {
				b = int(float64(t) / float64(maxT) * float64(pw-1))
			}
			if within != nil {
				counts[i][b] = math.Max(counts[i][b], float64(within[j]))
			} else {
				counts[i][b]++ // no window: how many came back in the column
			}
			peak = math.Max(peak, counts[i][b])
		}
	}
	yw = max(yw, len(humanNum(peak)))
	var rows []string
	for i, s := range spreads {
		var t draw.Line
		t.Add(&st.Bold, s.Name)
		// The peak comes first, as retry_peak reads it: a narrow panel
		// leaves out how many came back.
		back := fmt.Sprintf("%d back", len(s.Times))
		nums := "  " + back
		if s.Window > 0 {
			nums = fmt.Sprintf("  peak %d in %v", s.Peak, s.Window)
			if t.Width()+draw.Width(nums)+3+draw.Width(back) <= p.w {
				nums += " · " + back
			}
		}
		t.Add(&st.Muted, nums)
		rows = append(rows, t.Fit(p.w))
		for r := k - 1; r >= 0; r-- {
			var l draw.Line
			label := ""
			if r == k-1 {
				label = humanNum(peak)
			}
			l.Add(&st.Faint, fmt.Sprintf("%*s┤", yw, label))
			l.Add(&st.Accent, barsRow(counts[i], peak, k, r, " "))
			rows = append(rows, l.Fit(p.w))
		}
	}
	var ax draw.Line
	ax.Add(&st.Faint, draw.Spaces(yw)+"└ 0s")
	span := shortDur(maxT.Round(100 * time.Millisecond))
	for _, end := range []string{"arrived after the first failure · " + span, "after the first failure · " + span, span} {
		if ax.Width()+1+draw.Width(end) <= p.w {
			ax.Pad(p.w - draw.Width(end))
			ax.Add(&st.Faint, end)
			break
		}
	}
	rows = append(rows, ax.Fit(p.w))
	return rows
}

// windowCounts says, for each of the sorted times, how many of them fall
// within [it, it+window), as retry_peak counts a window from the retry
// that opens it; nil without a window.
func windowCounts(times []time.Duration, window time.Duration) []int {
	if window <= 0 {
		return nil
	}
	out := make([]int, len(times))
	to := 0
	for i, t := range times {
		for to < len(times) && times[to]-t < window {
			to++
		}
		out[i] = to - i
	}
	return out
}

// humanNum writes 1234 as 1.2k: chart labels must stay short.
func humanNum(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	case v >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', 0, 64) + "k"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	case v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
}
