package tui

import (
	"cmp"
	"slices"

	"github.com/mqlab/mqlab/tui/panel"
)

// The smallest screen the lab draws on; below it, one notice.
const (
	MinWidth  = 80
	MinHeight = 24
)

type rect struct{ x, y, w, h int }

func (r rect) contains(x, y int) bool {
	return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h
}

// slot is one framed box of the body. With several panels it is tabbed:
// it shows one at a time and names the others on its top border.
type slot struct {
	r      rect
	panels []panel.ID
	active int
}

// layout is where every panel goes, computed once per window size.
type layout struct {
	name     string // "compact", "medium", "large", "huge": for tests
	slots    []slot
	taskLine bool // a row above the body for the current task
	body     rect
}

// chrome is the rows outside the body: header, status, help bar.
const chrome = 3

// computeLayout splits a screen of w×h cells. Small screens get one tabbed
// box; large ones show more panels side by side.
func computeLayout(w, h int, hasLesson bool) layout {
	bodyY := 1
	bh := h - chrome
	lay := layout{}
	switch {
	case w < 100 || bh < 27:
		lay.name = "compact"
		if hasLesson && bh >= 20 {
			lay.taskLine = true
			bodyY++
			bh--
		}
		lay.body = rect{0, bodyY, w, bh}
		first := panel.ClusterID
		lay.slots = []slot{{r: lay.body, panels: allPanels(), active: int(first)}}
	case w < 120 || bh < 34:
		lay.name = "medium"
		lay.body = rect{0, bodyY, w, bh}
		lw := clamp(w*36/100, 34, 48)
		if hasLesson { // narrative reads badly in a narrow column
			lw = clamp(w*42/100, 38, 52)
		}
		lay.slots = []slot{
			{r: rect{0, bodyY, lw, bh}, panels: []panel.ID{panel.LessonID, panel.CheckerID, panel.TimelineID}},
			{r: rect{lw, bodyY, w - lw, bh}, panels: []panel.ID{panel.ClusterID, panel.GroupsID, panel.QueuesID, panel.ServicesID, panel.ChartID, panel.RaftID}},
		}
	case w < 180 || bh < 48:
		lay.name = "large"
		lay.body = rect{0, bodyY, w, bh}
		lw := clamp(w*33/100, 38, 56)
		lessonH := bh * 68 / 100
		if hasLesson { // the lesson is read first: more of it shows
			lw = clamp(w*37/100, 42, 60)
			lessonH = bh * 76 / 100
		}
		rw := w - lw
		top := bh * 60 / 100
		bw := rw * 62 / 100
		lay.slots = []slot{
			{r: rect{0, bodyY, lw, lessonH}, panels: []panel.ID{panel.LessonID}},
			{r: rect{0, bodyY + lessonH, lw, bh - lessonH}, panels: []panel.ID{panel.TimelineID}},
			{r: rect{lw, bodyY, rw, top}, panels: []panel.ID{panel.ClusterID}},
			{r: rect{lw, bodyY + top, bw, bh - top}, panels: []panel.ID{panel.GroupsID, panel.QueuesID, panel.ServicesID, panel.ChartID, panel.RaftID}},
			{r: rect{lw + bw, bodyY + top, rw - bw, bh - top}, panels: []panel.ID{panel.CheckerID}},
		}
	default:
		lay.name = "huge"
		lay.body = rect{0, bodyY, w, bh}
		lw := w * 24 / 100
		mw := w * 48 / 100
		rw := w - lw - mw
		lessonH := bh * 62 / 100
		clusterH := bh * 64 / 100
		tlH := bh * 42 / 100
		qH := bh * 24 / 100
		lay.slots = []slot{
			{r: rect{0, bodyY, lw, lessonH}, panels: []panel.ID{panel.LessonID}},
			{r: rect{0, bodyY + lessonH, lw, bh - lessonH}, panels: []panel.ID{panel.CheckerID}},
			{r: rect{lw, bodyY, mw, clusterH}, panels: []panel.ID{panel.ClusterID}},
			{r: rect{lw, bodyY + clusterH, mw, bh - clusterH}, panels: []panel.ID{panel.GroupsID}},
			{r: rect{lw + mw, bodyY, rw, tlH}, panels: []panel.ID{panel.TimelineID}},
			{r: rect{lw + mw, bodyY + tlH, rw, qH}, panels: []panel.ID{panel.QueuesID}},
			{r: rect{lw + mw, bodyY + tlH + qH, rw, bh - tlH - qH}, panels: []panel.ID{panel.ServicesID, panel.ChartID, panel.RaftID}},
		}
	}
	return lay
}

func allPanels() []panel.ID {
	ps := make([]panel.ID, panel.Count)
	for i := range ps {
		ps[i] = panel.ID(i)
	}
	return ps
}

// slotOf returns the slot showing a panel and its index in the slot.
func (l *layout) slotOf(id panel.ID) (int, int) {
	for si, s := range l.slots {
		for pi, p := range s.panels {
			if p == id {
				return si, pi
			}
		}
	}
	return -1, -1
}

// focusOrder is the order tab moves the focus in: the screen's reading
// order, column by column from the left, each column from the top, and
// within a box its tabs from left to right.
func (l *layout) focusOrder() []panel.ID {
	slots := slices.Clone(l.slots)
	slices.SortStableFunc(slots, func(a, b slot) int {
		return cmp.Or(cmp.Compare(a.r.x, b.r.x), cmp.Compare(a.r.y, b.r.y))
	})
	var out []panel.ID
	for _, s := range slots {
		out = append(out, s.panels...)
	}
	return out
}

// nextFocus is the panel after (or with back, before) id in focusOrder.
func (l *layout) nextFocus(id panel.ID, back bool) panel.ID {
	order := l.focusOrder()
	if len(order) == 0 {
		return id
	}
	i := slices.Index(order, id)
	switch {
	case i < 0:
		return order[0]
	case back:
		return order[(i+len(order)-1)%len(order)]
	}
	return order[(i+1)%len(order)]
}

// visible says whether a panel is on screen now.
func (l *layout) visible(id panel.ID) bool {
	si, pi := l.slotOf(id)
	return si >= 0 && l.slots[si].active == pi
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }
