package panel

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/view"
)

// Cluster draws the nodes and, per partition, every replica's log as
// a strip of cells on one shared offset axis, so a follower that is behind
// or a tail about to be cut lines up under the leader's log.
type Cluster struct {
	ctx  *Context
	w, h int
	scrolled
	// nodeZones records where each node was drawn (row, [x0, x1)) for
	// mouse clicks, relative to the panel's content.
	nodeZones []zone
}

type zone struct {
	row, x0, x1 int
	index       int
}

// truncationRecent is how long, in lab time, a replica keeps naming its
// last truncation.
const truncationRecent = 30 * time.Second

func NewCluster(ctx *Context) *Cluster {
	return &Cluster{ctx: ctx, scrolled: scrolled{keys: ctx.Scroll}}
}

func (p *Cluster) Title() string    { return "Cluster" }
func (p *Cluster) SetSize(w, h int) { p.w, p.h = w, h }

// NodeAt returns the node drawn at a content position.
func (p *Cluster) NodeAt(x, y int) (int, bool) {
	for _, z := range p.nodeZones {
		if z.row == y && x >= z.x0 && x < z.x1 {
			return z.index, true
		}
	}
	return 0, false
}

func (p *Cluster) View() string {
	st := p.ctx.Styles
	s := p.ctx.State
	p.nodeZones = p.nodeZones[:0]
	if len(s.Nodes) == 0 && len(s.Partitions) == 0 {
		return draw.Block(emptyHint(p.ctx, p.ctx.noCluster(), "No cluster yet. Start one with  :cluster nodes=3"), p.w, p.h)
	}
	rows := p.nodeRows()
	if s.Kafka != nil {
		rows = append(rows, kafkaRow(st, s.Kafka, p.w))
	}
	if len(s.Partitions) == 0 {
		rows = append(rows, "")
		rows = append(rows, emptyHint(p.ctx, "No topics yet.", "No topics yet. Try  :topic create orders partitions=3")...)
		return draw.Block(rows, p.w, p.h)
	}
	rows = append(rows, "")
	avail := p.h - len(rows)
	if avail < 2 {
		return draw.Block(rows, p.w, p.h)
	}
	// Where the segment files are, on the panel's last row when the
	// partitions leave it free.
	need := len(s.Partitions) - 1
	for _, pt := range s.Partitions {
		need += p.height(pt)
	}
	files := s.LogDir != "" && p.off == 0 && need < avail
	if files {
		avail--
	}
	rows = append(rows, p.partitionRows(avail)...)
	if files {
		path := []rune(s.LogDir + string(filepath.Separator))
		if room := p.w - 7; len(path) > room && room > 0 {
			path = append([]rune("…"), path[len(path)-room:]...) // the end of a path tells labs apart
		}
		rows = append(rows, st.Faint.Render("files ")+st.Muted.Render(string(path)))
	}
	return draw.Block(rows, p.w, p.h)
}

// nodeRows draws one row per node, or one row for all when space is short.
func (p *Cluster) nodeRows() []string {
	st := p.ctx.Styles
	nodes := p.ctx.State.Nodes
	inline := len(nodes) > 5 || p.h < len(nodes)+6
	if inline {
		var l draw.Line
		for i, n := range nodes {
			if i > 0 {
				l.Add(&st.Faint, " │ ")
			}
			x0 := l.Width()
			p.nodeLabel(&l, i, n)
			if n.Up {
				if k := leadsCount(n.Leads); k > 0 {
					l.Add(&st.Leader, fmt.Sprintf(" %s%d", draw.SymLeader, k))
				}
			}
			p.nodeZones = append(p.nodeZones, zone{row: 0, x0: x0, x1: l.Width(), index: i})
		}
		return []string{l.Fit(p.w)}
	}
	idW := 2
	for _, n := range nodes {
		idW = max(idW, draw.Width(n.ID))
	}
	// The leads column starts after the widest label: a long state
	// ("cut from n2,n3") pushes it along for every node.
	labels := make([]draw.Line, len(nodes))
	col := idW + 2 + 12
	for i, n := range nodes {
		p.nodeLabel(&labels[i], i, n)
		col = max(col, labels[i].Width()+2)
	}
	rows := make([]string, 0, len(nodes))
	for i, n := range nodes {
		l := &labels[i]
		l.Pad(col)
		switch {
		case !n.Up:
			l.Add(&st.Muted, "leads nothing")
		case len(n.Leads) == 0:
			l.Add(&st.Muted, "leads nothing")
		default:
			l.Add(&st.Muted, "leads ")
			l.Add(&st.Leader, draw.SymLeader+" ")
			// Whole names, then how many more, rather than a name cut.
			for j, name := range n.Leads {
				sep := ", "
				if j == 0 {
					sep = ""
				}
				more := ""
				if j < len(n.Leads)-1 {
					more = fmt.Sprintf(" +%d more", len(n.Leads)-j-1)
				}
				if j > 0 && l.Width()+len(sep)+draw.Width(name)+len(more) > p.w {
					l.Add(&st.Muted, fmt.Sprintf(" +%d more", len(n.Leads)-j))
					break
				}
				l.Add(&st.Text, sep+name)
			}
		}
		p.nodeZones = append(p.nodeZones, zone{row: i, x0: 0, x1: p.w, index: i})
		rows = append(rows, l.Fit(p.w))
	}
	return rows
}

func leadsCount(leads []string) int { return len(leads) }

// nodeLabel writes "› n1 ✗ down" with the selection marked by a symbol.
func (p *Cluster) nodeLabel(l *draw.Line, i int, n view.Node) {
	st := p.ctx.Styles
	if i == p.ctx.Selected {
		l.Add(&st.Accent, draw.SymSelected)
		l.Add(&st.Selected, n.ID)
	} else {
		l.Add(nil, " ")
		l.Add(&st.Bold, n.ID)
	}
	l.Add(nil, " ")
	switch {
	case !n.Up:
		l.Add(&st.Down, draw.SymDown+" down")
	case n.Isolated:
		l.Add(&st.Isolated, draw.SymIsolated+" isolated")
	default:
		l.Add(&st.OK, draw.SymUp+" up")
		if len(n.CutFrom) > 0 {
			l.Add(&st.Isolated, " "+draw.SymIsolated+" cut from "+strings.Join(n.CutFrom, ","))
		}
	}
	if n.Latency > 0 {
		l.Add(&st.Warn, " "+draw.SymSlow+n.Latency.String())
	}
}

// partitionRows draws as many partitions as fit in avail rows, in one or
// more columns, starting at the scroll offset.
func (p *Cluster) partitionRows(avail int) []string {
	st := p.ctx.Styles
	parts := p.ctx.State.Partitions
	if p.off >= len(parts) {
		p.off = max(0, len(parts)-1)
	}
	const minColW = 60
	cols := max(1, min(p.w/minColW, 3))
	need := 0
	for _, pt := range parts[min(p.off, len(parts)):] {
		need += p.height(pt)
	}
	if need <= avail {
		cols = 1
	}
	colW := (p.w - (cols - 1)) / cols
	// Columns only while each still shows a useful stretch of the log.
	if cols > 1 && layoutStrip(parts[0], colW).n < min(12, layoutStrip(parts[0], p.w).n) {
		cols, colW = 1, p.w
	}

	// Fill columns top to bottom.
	columns := make([][]string, cols)
	i := p.off
	for c := 0; c < cols && i < len(parts); c++ {
		for i < len(parts) {
			pr := p.partition(parts[i], colW)
			gap := 0
			if len(columns[c]) > 0 && need+len(parts)-1 <= avail*cols {
				gap = 1
			}
			if len(columns[c])+gap+len(pr) > avail {
				if len(columns[c]) == 0 { // taller than the panel: draw what fits
					columns[c] = append(columns[c], pr[:avail]...)
					i++
				}
				break
			}
			if gap > 0 {
				columns[c] = append(columns[c], "")
			}
			columns[c] = append(columns[c], pr...)
			i++
		}
	}
	rows := make([]string, avail)
	for r := 0; r < avail; r++ {
		var b strings.Builder
		for c := 0; c < cols; c++ {
			if c > 0 {
				b.WriteString(st.Faint.Render("│"))
			}
			if r < len(columns[c]) {
				b.WriteString(draw.Fit(columns[c][r], colW))
			} else {
				b.WriteString(draw.Spaces(colW))
			}
		}
		rows[r] = b.String()
	}
	if hidden := len(parts) - i; hidden > 0 || p.off > 0 {
		msg := fmt.Sprintf("partitions %d–%d of %d · focus with tab, ↑/↓ to scroll", p.off+1, i, len(parts))
		rows[avail-1] = st.Muted.Render(msg)
	}
	return rows
}

// height is how many rows partition draws for pt.
func (p *Cluster) height(pt view.Partition) int {
	h := 1 + len(pt.Replicas)
	for _, r := range pt.Replicas {
		if p.truncShown(pt, r) {
			h++
		}
	}
	return h
}

// truncShown says whether a replica's last truncation is named: while it
// flashes, and for a while after in lab time.
func (p *Cluster) truncShown(pt view.Partition, r view.Replica) bool {
	t := r.Truncation
	if t == nil {
		return false
	}
	_, active := p.ctx.flashing(TruncKey(pt.Name, r.Node, t))
	return active || p.ctx.State.Time.Sub(t.At) < truncationRecent
}

// groupHead starts the header of a raft group (a partition, a queue): its
// name, then its leader, or that it has none; false when it has none.
func groupHead(l *draw.Line, st *draw.Styles, name, leader string) bool {
	l.Add(&st.Header, name)
	l.Add(nil, "  ")
	if leader == "" {
		l.Add(&st.Fail, draw.SymFail+" no leader")
		return false
	}
	l.Add(&st.Muted, "leader ")
	l.Add(&st.Leader, draw.SymLeader+" "+leader)
	return true
}

// partition draws one partition: a header with the leader, epoch and an
// offset ruler, then one row per replica.
func (p *Cluster) partition(pt view.Partition, w int) []string {
	st := p.ctx.Styles
	lay := layoutStrip(pt, w)
	rows := make([]string, 0, 1+len(pt.Replicas))

	// Header: name, leader and epoch in words, then the ruler.
	var h draw.Line
	if !groupHead(&h, st, pt.Name, pt.Leader) {
		// Why not, in words: an election takes a majority of replicas.
		up := 0
		for _, r := range pt.Replicas {
			if r.Role != "down" {
				up++
			}
		}
		if n := len(pt.Replicas); n > 0 && up*2 > n {
			h.Add(&st.Warn, ", electing")
		} else if n > 0 {
			h.Add(&st.Warn, fmt.Sprintf(", %d of %d up: no majority", up, n))
		}
	}
	h.Add(&st.Muted, "  epoch ")
	ec, changed := p.ctx.EpochFlash[pt.Name]
	if changed && !p.ctx.InHistory && ec.To == pt.Epoch {
		es := st.Accent
		if p.ctx.Frame%2 == 0 {
			es = st.Flash
		}
		h.Add(&es, fmt.Sprintf("%d (new, was %d)", pt.Epoch, ec.From))
	} else {
		h.Add(&st.Bold, strconv.FormatUint(pt.Epoch, 10))
	}
	rows = append(rows, p.ruler(&h, lay, w))

	for _, r := range pt.Replicas {
		row, cutRow := p.replica(pt, r, lay, w)
		rows = append(rows, row)
		if cutRow != "" {
			rows = append(rows, cutRow)
		}
	}
	return rows
}

// stripLayout is where the cells of a partition go.
type stripLayout struct {
	labelW int   // replica label column
	cellW  int   // cells per offset, gap included
	epochW int   // digits of the widest epoch in view
	start  int64 // first offset drawn
	n      int   // offsets drawn
	infoW  int   // the column after the strip
}

func layoutStrip(pt view.Partition, w int) stripLayout {
	var lay stripLayout
	nodeW := 2
	var end int64
	window := 0
	var maxEpoch, maxNum uint64 = 1, 1
	for _, r := range pt.Replicas {
		nodeW = max(nodeW, draw.Width(r.Node))
		end = max(end, r.LEO)
		window = max(window, len(r.Entries))
		maxEpoch = max(maxEpoch, r.Epoch)
		for _, e := range r.Entries {
			maxEpoch = max(maxEpoch, e.Epoch)
		}
		maxNum = max(maxNum, uint64(max(r.LEO, 0)))
	}
	lay.epochW = len(strconv.FormatUint(maxEpoch, 10))
	// "›n1 ▲ leader    e8 "
	lay.labelW = 1 + nodeW + 1 + 1 + 1 + len("candidate") + 1 + 1 + lay.epochW + 1
	lay.cellW = 1 + 1 + lay.epochW // gap, mark, epoch
	// The numbers keep a cell clear of the border: at four digits and
	// more the strip gives up an offset for it.
	numW := len(strconv.FormatUint(maxNum, 10))
	infoMin := len("hwm  leo ") + 2*numW + 1
	room := w - lay.labelW - infoMin - 2
	if room < 4*lay.cellW { // narrow: keep the log, shorten the words
		infoMin = 1 + 2*numW + 1
		room = w - lay.labelW - infoMin - 2
	}
	lay.n = max(0, min(room/lay.cellW, window))
	lay.start = end - int64(lay.n)
	lay.infoW = w - lay.labelW - lay.n*lay.cellW - 1
	return lay
}

// ruler writes offset labels above the cells onto the header row.
func (p *Cluster) ruler(h *draw.Line, lay stripLayout, w int) string {
	st := p.ctx.Styles
	pos := lay.labelW + 1 // the mark of the first cell
	next := h.Width() + 2
	// The first label says what the numbers are: a bare number after the
	// epoch would read as another value of the partition.
	const word = "offset "
	named := false
	for i := 0; i < lay.n; i++ {
		x := pos + i*lay.cellW
		off := lay.start + int64(i)
		lead := 0
		if !named {
			lead = len(word)
		}
		if x-lead < next || (i > 0 && off%5 != 0) {
			continue
		}
		label := strconv.FormatInt(off, 10)
		if x+len(label) > lay.labelW+lay.n*lay.cellW+1 {
			break
		}
		h.Pad(x - lead)
		if !named {
			h.Add(&st.Faint, word)
			named = true
		}
		h.Add(&st.Faint, label)
		next = x + len(label) + 2
	}
	return h.Fit(w)
}

// replica draws one replica: label, cells, then its numbers; while its
// last truncation is recent, a second row says what was cut.
func (p *Cluster) replica(pt view.Partition, r view.Replica, lay stripLayout, w int) (string, string) {
	st := p.ctx.Styles
	var l draw.Line
	if r.Node == p.ctx.SelectedNode() {
		l.Add(&st.Accent, draw.SymSelected)
	} else {
		l.Add(nil, " ")
	}
	l.Add(&st.Bold, r.Node)
	l.Add(nil, " ")
	switch r.Role {
	case "leader":
		l.Add(&st.Leader, draw.SymLeader+" leader")
	case "down":
		l.Add(&st.Down, draw.SymDown+" down")
	case "candidate":
		l.Add(&st.Warn, draw.SymCandidate+" candidate")
	default:
		l.Add(&st.Muted, "  "+r.Role)
	}
	if r.Role == "down" && r.LEO == 0 && len(r.Entries) == 0 {
		// A dead node reports no log: its memory is gone, and what its
		// disk holds is read when it restarts. Say so rather than draw an
		// empty log and offsets of 0 that are not what it holds; the last
		// epoch its disk recorded is known, and shown as the others are.
		if r.Epoch > 0 {
			l.Pad(lay.labelW - 2 - lay.epochW)
			l.Add(&st.Muted, "e")
			l.Add(&st.Text, strconv.FormatUint(r.Epoch, 10))
		}
		l.Pad(lay.labelW)
		l.Add(&st.Muted, "not running: its log waits on disk")
		return l.Fit(w), ""
	}
	l.Pad(lay.labelW - 2 - lay.epochW)
	l.Add(&st.Muted, "e")
	l.Add(&st.Text, strconv.FormatUint(r.Epoch, 10))
	l.Pad(lay.labelW)

	// Truncation: flashing now, or named while recent.
	var trunc *view.Truncation
	var flashOn, flashActive bool
	if p.truncShown(pt, r) {
		trunc = r.Truncation
		flashOn, flashActive = p.ctx.flashing(TruncKey(pt.Name, r.Node, trunc))
	}
	p.cells(&l, r, lay, trunc, flashActive, flashOn)
	l.Pad(lay.labelW + lay.n*lay.cellW + 1)

	// Numbers, then the truncation in words.
	l.Add(nil, " ")
	info := lay.infoW - 1
	full := fmt.Sprintf("hwm %d leo %d", r.HWM, r.LEO)
	if draw.Width(full) > info {
		full = fmt.Sprintf("%d/%d", r.HWM, r.LEO)
	}
	l.Add(&st.Muted, full)
	if r.LogStart > 0 && lay.start > r.LogStart && draw.Width(full)+len(" start ")+len(strconv.FormatInt(r.LogStart, 10)) <= info {
		l.Add(&st.Faint, fmt.Sprintf(" start %d", r.LogStart))
	}
	if trunc == nil {
		return l.Fit(w), ""
	}
	ts := st.Truncated
	if flashActive && flashOn {
		ts = st.Flash
	}
	// The row names what was cut and its epoch, which a lesson points
	// at: where it does not fit under the log it starts further left,
	// then drops its last words, rather than lose the epoch at the edge.
	head, what, tail := draw.SymTruncated+" "+r.Node+" truncated:", " "+truncWords(trunc), ", never committed"
	indent := lay.labelW - 1 - draw.Width(draw.SymTruncated)
	if indent+draw.Width(head+what+tail) > w {
		indent = 1
	}
	if indent+draw.Width(head+what+tail) > w {
		tail = ""
	}
	var c draw.Line
	c.Pad(indent)
	c.Add(&ts, head)
	c.Add(&st.Truncated, what)
	c.Add(&st.Muted, tail)
	return l.Fit(w), c.Fit(w)
}

func truncWords(t *view.Truncation) string {
	n := t.To - t.From
	what := fmt.Sprintf("cut %d uncommitted", n)
	if n == 1 {
		what = fmt.Sprintf("cut offset %d", t.From)
	} else if n > 1 {
		what = fmt.Sprintf("cut %d–%d", t.From, t.To-1)
	}
	if len(t.Epochs) > 0 {
		es := make([]string, 0, len(t.Epochs))
		seen := map[uint64]bool{}
		for _, e := range t.Epochs {
			if !seen[e] {
				seen[e] = true
				es = append(es, strconv.FormatUint(e, 10))
			}
		}
		what += " (epoch " + strings.Join(es, ",") + ")"
	}
	return what
}

// cells draws the strip. Runs of cells in one style are rendered in one
// call: a wide screen draws a few hundred cells per Frame.
func (p *Cluster) cells(l *draw.Line, r view.Replica, lay stripLayout, trunc *view.Truncation, flashActive, flashOn bool) {
	st := p.ctx.Styles
	run := styledRun{l: l}
	epochW := lay.epochW
	blankCell := draw.Spaces(1 + epochW)
	for i := 0; i < lay.n; i++ {
		off := lay.start + int64(i)
		// The gap before the cell carries the markers.
		gap := gapMark(r, off, i == 0)
		gs := &st.Faint
		if gap == "|" {
			gs = &st.Committed
		}
		run.put(gs, gap, 1)

		inCut := trunc != nil && flashActive && off >= trunc.From && off < trunc.To
		switch {
		case off < r.LogStart:
			run.put(nil, blankCell, 1+epochW)
		case off >= r.LEO:
			if inCut {
				s := &st.Truncated
				if flashOn {
					s = &st.Flash
				}
				run.put(s, draw.SymTruncated+padEpoch(cutEpoch(trunc, off), epochW), 1+epochW)
			} else {
				run.put(nil, blankCell, 1+epochW)
			}
		default:
			e, ok := entryAt(r.Entries, off)
			if !ok {
				run.put(&st.Faint, "·"+draw.Spaces(epochW), 1+epochW)
				continue
			}
			mark, s := draw.SymUncommitted, &st.Uncommitted
			switch {
			case e.Committed:
				mark, s = draw.SymCommitted, &st.Committed
			case e.Learning:
				mark, s = draw.SymLearning, &st.Committed
			}
			if inCut && flashOn {
				s = &st.Flash
			}
			run.put(s, mark+padEpoch(e.Epoch, epochW), 1+epochW)
		}
	}
	run.flush()
}

// gapMark is the marker in the gap before the cell at off: the log's
// start, more before the strip's first cell, the high-water mark, or the
// first offset of a segment file (the log's start is one too).
func gapMark(r view.Replica, off int64, first bool) string {
	switch {
	case off == r.LogStart && off < r.LEO:
		return "["
	case first && off > r.LogStart && off < r.LEO:
		return "…"
	case off == r.HWM && off < r.LEO && off > r.LogStart:
		return "|"
	case off > r.LogStart && off < r.LEO && segmentStart(r.SegmentStarts, off):
		return draw.SymSegment
	}
	return " "
}

// segmentStart says whether a segment of the replica begins at off.
func segmentStart(starts []int64, off int64) bool {
	_, found := slices.BinarySearch(starts, off)
	return found
}

// entryAt is the entry at offset off. Entries are in offset order and
// usually contiguous: index directly, search when there are gaps.
func entryAt(es []view.Entry, off int64) (view.Entry, bool) {
	if len(es) == 0 {
		return view.Entry{}, false
	}
	i := int(off - es[0].Offset)
	if i >= 0 && i < len(es) && es[i].Offset == off {
		return es[i], true
	}
	j := sort.Search(len(es), func(k int) bool { return es[k].Offset >= off })
	if j < len(es) && es[j].Offset == off {
		return es[j], true
	}
	return view.Entry{}, false
}

// styledRun gathers cells of one style and adds them to a line in one
// render call.
type styledRun struct {
	l     *draw.Line
	b     strings.Builder
	style *draw.Style
	w     int
}

func (r *styledRun) put(s *draw.Style, text string, w int) {
	if s != r.style {
		r.flush()
		r.style = s
	}
	r.b.WriteString(text)
	r.w += w
}

func (r *styledRun) flush() {
	if r.w > 0 {
		if r.style == nil {
			r.l.AddStyled(r.b.String(), r.w)
		} else {
			r.l.AddStyled(r.style.Render(r.b.String()), r.w)
		}
	}
	r.b.Reset()
	r.w = 0
}

func cutEpoch(t *view.Truncation, off int64) uint64 {
	i := int(off - t.From)
	if i >= 0 && i < len(t.Epochs) {
		return t.Epochs[i]
	}
	if len(t.Epochs) > 0 {
		return t.Epochs[len(t.Epochs)-1]
	}
	return 0
}

func padEpoch(e uint64, w int) string {
	s := strconv.FormatUint(e, 10)
	if len(s) >= w {
		return s
	}
	return s + draw.Spaces(w-len(s))
}
