package panel

import (
	"fmt"
	"strconv"
	"time"

	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/view"
)

// Queues draws work queues: how many messages are ready, in flight
// (with the time until each comes back), delayed and dead-lettered, and how
// often each has been received.
type Queues struct {
	ctx  *Context
	w, h int
	scrolled
}

func NewQueues(ctx *Context) *Queues { return &Queues{ctx: ctx, scrolled: scrolled{keys: ctx.Scroll}} }

func (p *Queues) Title() string    { return "Queues" }
func (p *Queues) SetSize(w, h int) { p.w, p.h = w, h }

func (p *Queues) View() string {
	st := p.ctx.Styles
	qs := p.ctx.State.Queues
	if len(qs) == 0 {
		return draw.Block(emptyHint(p.ctx, "No queues.", "No queues. Create one with", "  :queue create receipts visibility=5s"), p.w, p.h)
	}
	var rows []string
	for qi, q := range qs {
		if qi > 0 {
			rows = append(rows, "")
		}
		rows = append(rows, p.queueHead(q)...)
		rows = append(rows, p.messages(q)...)
	}
	out, off := draw.Window(rows, p.off, p.h, st)
	p.off = off
	return draw.Block(out, p.w, p.h)
}

// queueHead is a queue's name, leader and settings, then its counts.
// What does not fit on a row goes on to the next, a whole item at a
// time, so that a setting a lesson asks about (max receives 5, max
// length 100) is never cut.
func (p *Queues) queueHead(q view.Queue) []string {
	st := p.ctx.Styles
	var l draw.Line
	groupHead(&l, st, q.Name, q.Leader)
	l.Add(&st.Muted, fmt.Sprintf("  epoch %d", q.Epoch))
	var set []*draw.Line
	item := func(s *draw.Style, text string) {
		c := &draw.Line{}
		c.Add(s, text)
		set = append(set, c)
	}
	if q.Visibility > 0 {
		item(&st.Faint, "visibility "+shortDur(q.Visibility))
	}
	if q.MaxReceives > 0 {
		item(&st.Faint, fmt.Sprintf("max receives %d", q.MaxReceives))
	}
	if q.MaxLength > 0 {
		item(&st.Faint, fmt.Sprintf("max length %d", q.MaxLength))
	}
	if q.TTL > 0 {
		item(&st.Faint, "ttl "+shortDur(q.TTL))
	}
	rows := flowItems(&l, set, "  ", "  ", p.w)

	var counts []*draw.Line
	count := func(word string, n int, s *draw.Style) {
		c := &draw.Line{}
		c.Add(&st.Muted, word+" ")
		c.Add(s, strconv.Itoa(n))
		counts = append(counts, c)
	}
	count("ready", q.Ready, &st.Bold)
	count("in flight", q.InFlight, &st.Bold)
	count("delayed", q.Delayed, &st.Bold)
	if q.DLQ != "" {
		s := &st.Bold
		if q.DLQDepth > 0 {
			s = &st.Fail
		}
		count("DLQ "+q.DLQ, q.DLQDepth, s)
	}
	var c draw.Line
	c.Add(nil, "  ")
	c.Append(counts[0])
	return append(rows, flowItems(&c, counts[1:], " · ", "  ", p.w)...)
}

// flowItems puts items after a row's start, sep between them, each whole:
// one that does not fit goes on a new row that starts with indent.
func flowItems(row *draw.Line, items []*draw.Line, sep, indent string, w int) []string {
	var rows []string
	fresh := false
	for _, it := range items {
		if !fresh && row.Width()+draw.Width(sep)+it.Width() > w {
			rows = append(rows, row.Fit(w))
			row = &draw.Line{}
			row.Add(nil, indent)
			fresh = true
		}
		if !fresh {
			row.Add(nil, sep)
		}
		row.Append(it)
		fresh = false
	}
	return append(rows, row.Fit(w))
}

// messages is a row per message the queue holds: its state, the worker
// holding it, when it comes back, how often it was received, and its
// value. Columns take only the room their longest entry needs, and a
// value that does not fit beside them goes on a row of its own below,
// so that it reads whole in a narrow pane.
func (p *Queues) messages(q view.Queue) []string {
	st := p.ctx.Styles
	var rows []string
	idW, stateW, wkW, dueW := 4, 0, 0, 0
	for _, m := range q.Messages {
		state, due := messageState(m)
		idW = max(idW, draw.Width(m.ID))
		stateW = max(stateW, draw.Width(state))
		wkW = max(wkW, draw.Width(m.Worker))
		if due != "" {
			dueW = max(dueW, draw.Width(due))
		}
	}
	idW = min(idW, 16)
	for _, m := range q.Messages {
		var ml draw.Line
		ml.Add(nil, "  ")
		ml.Add(&st.Text, draw.Fit(m.ID, idW))
		ml.Add(nil, " ")
		state, due := messageState(m)
		ss := &st.OK
		switch m.State {
		case "in-flight":
			ss = &st.Warn
		case "delayed":
			ss = &st.Muted
		}
		ml.Add(ss, draw.Fit(state, stateW+1))
		if wkW > 0 {
			ml.Add(&st.Text, draw.Fit(m.Worker, wkW+1))
		}
		if dueW > 0 {
			ml.Add(&st.Muted, draw.Fit(due, dueW+1))
		}
		rs := &st.Muted
		if q.MaxReceives > 0 && m.Receives >= q.MaxReceives-1 && m.Receives > 1 {
			rs = &st.Fail
		}
		ml.Add(rs, fmt.Sprintf("recv %d×", m.Receives))
		if m.Value == "" {
			rows = append(rows, ml.Fit(p.w))
			continue
		}
		if ml.Width()+2+draw.Width(m.Value) <= p.w {
			ml.Add(&st.Faint, "  "+m.Value)
			rows = append(rows, ml.Fit(p.w))
			continue
		}
		rows = append(rows, ml.Fit(p.w))
		lead := min(4+idW, p.w/3)
		for _, s := range draw.Wrap(m.Value, p.w-lead) {
			rows = append(rows, draw.Spaces(lead)+st.Faint.Render(s))
		}
	}
	return rows
}

// messageState is a message's state in words, with its symbol, and when
// it changes: "◔ in flight", "back in 2.0s".
func messageState(m view.QueueMessage) (state, due string) {
	switch m.State {
	case "in-flight":
		return "◔ in flight", "back in " + countdown(m.Due)
	case "delayed":
		return "◷ delayed", "ready in " + countdown(m.Due)
	}
	return "● ready", ""
}

func countdown(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
}

func shortDur(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.Itoa(int(d/time.Second)) + "s"
	}
	return d.String()
}
