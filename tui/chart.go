package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// chartPanel draws what a picture says better than numbers: backlog and
// lag over time (a flash sale's queue growing, then draining), and when
// retries fired (backoff without jitter comes in waves; with full jitter,
// spread out).
type chartPanel struct {
	ctx  *Context
	w, h int
}

func newChartPanel(ctx *Context) *chartPanel { return &chartPanel{ctx: ctx} }

func (p *chartPanel) Title() string    { return "Chart" }
func (p *chartPanel) SetSize(w, h int) { p.w, p.h = w, h }
func (p *chartPanel) Scroll(int)       {}

var eighths = []string{" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"}

func (p *chartPanel) View() string {
	st := p.ctx.Styles
	c := p.ctx.State.Charts
	n := len(c.Series) + len(c.Retries)
	if n == 0 {
		return block([]string{st.Muted.Render("Nothing to chart yet: a load, a lagging group"),
			st.Muted.Render("or retries draw here.")}, p.w, p.h)
	}
	axis := 0
	if len(c.Retries) > 0 {
		axis = 1
	}
	k := (p.h - n - axis) / n
	for k < 1 && n > 1 { // too many charts for the height: drop the last
		if len(c.Retries) > 0 {
			c.Retries = c.Retries[:len(c.Retries)-1]
			if len(c.Retries) == 0 {
				axis = 0
			}
		} else {
			c.Series = c.Series[:len(c.Series)-1]
		}
		n--
		k = (p.h - n - axis) / n
	}
	k = max(1, min(k, 8))
	var rows []string
	for _, s := range c.Series {
		rows = append(rows, p.series(s, k)...)
	}
	if len(c.Retries) > 0 {
		rows = append(rows, p.retries(c.Retries, k)...)
	}
	return block(rows, p.w, p.h)
}

func (p *chartPanel) series(s Series, k int) []string {
	st := p.ctx.Styles
	var peak, last float64
	for _, v := range s.Values {
		peak = math.Max(peak, v)
	}
	if len(s.Values) > 0 {
		last = s.Values[len(s.Values)-1]
	}
	yw := len(humanNum(peak))
	pw := max(1, p.w-yw-2)
	vals := s.Values
	if len(vals) > pw {
		vals = vals[len(vals)-pw:]
	}
	var t line
	t.add(&st.Bold, s.Name)
	unit := ""
	if s.Unit != "" {
		unit = " " + s.Unit
	}
	t.add(&st.Muted, fmt.Sprintf("  now %s%s · peak %s", humanNum(last), unit, humanNum(peak)))
	if s.Every > 0 && len(vals) > 0 {
		t.add(&st.Faint, " · last "+shortDur(time.Duration(len(vals))*s.Every))
	}
	rows := []string{t.fit(p.w)}
	for r := k - 1; r >= 0; r-- {
		var l line
		label := ""
		switch r {
		case k - 1:
			label = humanNum(peak)
		case 0:
			label = "0"
		}
		l.add(&st.Faint, fmt.Sprintf("%*s┤", yw, label))
		l.add(&st.Accent, barsRow(vals, peak, k, r))
		rows = append(rows, l.fit(p.w))
	}
	return rows
}

// barsRow is row r (0 at the bottom) of a bar chart k rows tall.
func barsRow(vals []float64, peak float64, k, r int) string {
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
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func (p *chartPanel) retries(spreads []RetrySpread, k int) []string {
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
		for _, t := range s.Times {
			b := 0
			if maxT > 0 {
				b = int(float64(t) / float64(maxT) * float64(pw-1))
			}
			counts[i][b]++
			peak = math.Max(peak, counts[i][b])
		}
	}
	yw = max(yw, len(humanNum(peak)))
	var rows []string
	for i, s := range spreads {
		var t line
		t.add(&st.Bold, s.Name)
		t.add(&st.Muted, fmt.Sprintf("  %d retries", len(s.Times)))
		rows = append(rows, t.fit(p.w))
		for r := k - 1; r >= 0; r-- {
			var l line
			label := ""
			if r == k-1 {
				label = humanNum(peak)
			}
			l.add(&st.Faint, fmt.Sprintf("%*s┤", yw, label))
			l.add(&st.Accent, barsRow(counts[i], peak, k, r))
			rows = append(rows, l.fit(p.w))
		}
	}
	var ax line
	ax.add(&st.Faint, spaces(yw)+"└ 0s")
	end := "retry time since the failure · " + shortDur(maxT.Round(100*time.Millisecond))
	ax.pad(p.w - textWidth(end))
	ax.add(&st.Faint, end)
	rows = append(rows, ax.fit(p.w))
	return rows
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
