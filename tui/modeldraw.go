package tui

// Drawing the lab screen: the layout for a window size and which panel is
// in front of each slot, then the header, the body, the status line and
// the full help.

import (
	"fmt"
	"github.com/mqlab/mqlab/tui/panel"
	"math"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"

	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/view"
)

// resize computes the layout once for a window size and gives every panel
// its content size.
func (m *Model) resize(w, h int) {
	m.ctx.Width, m.ctx.Height = w, h
	m.tooSmall = w < MinWidth || h < MinHeight
	if m.tooSmall {
		return
	}
	m.lay = computeLayout(w, h, m.live != nil && m.live.Lesson != nil)
	for si := range m.lay.slots {
		s := &m.lay.slots[si]
		for _, id := range s.panels {
			m.panels[id].SetSize(max(1, s.r.w-2), max(1, s.r.h-2))
		}
	}
	m.showFocus()
	m.showContent()
	m.help.Width = w
}

// showContent keeps a panel with something to show in front of each slot: when the one in front is empty (the
// cluster without topics, groups without members), the first of the
// slot's panels that has content comes forward. A lesson about a checkout
// and a queue then opens on its queue, not on "No topics yet". Once the
// learner picks a panel, the slots stay as they left them.
func (m *Model) showContent() {
	if m.chosen || m.ctx.State == nil {
		return
	}
	s := m.ctx.State
	has := func(id panel.ID) bool {
		switch id {
		case panel.ClusterID:
			// Its nodes are the thing to act on while the lab has nothing
			// else (a fresh sandbox); a queue, a group or a table comes
			// before "No topics yet".
			return len(s.Partitions) > 0 || len(s.Nodes) > 0 && len(s.Queues)+len(s.Groups)+len(s.Tables) == 0
		case panel.GroupsID:
			return len(s.Groups) > 0
		case panel.QueuesID:
			return len(s.Queues) > 0
		case panel.ServicesID:
			return len(s.Tables) > 0
		case panel.ChartID:
			return len(s.Charts.Series)+len(s.Charts.Retries) > 0
		case panel.RaftID:
			return len(s.Partitions) > 0
		}
		return true
	}
	for si := range m.lay.slots {
		sl := &m.lay.slots[si]
		front := sl.panels[sl.active]
		if has(front) {
			continue
		}
		for pi, id := range sl.panels {
			if has(id) {
				sl.active = pi
				if m.focus == front {
					m.focus = id
				}
				break
			}
		}
	}
}

// showFocus brings the focused panel to the front of its slot.
func (m *Model) showFocus() {
	if si, pi := m.lay.slotOf(m.focus); si >= 0 {
		m.lay.slots[si].active = pi
	}
}

func (m *Model) tabs(s *slot) []string {
	t := make([]string, len(s.panels))
	for i, id := range s.panels {
		t[i] = m.panels[id].Title()
	}
	return t
}

// View draws the screen.
func (m *Model) View() string {
	w, h := m.ctx.Width, m.ctx.Height
	if m.tooSmall {
		return m.tooSmallView(w, h)
	}
	st := m.ctx.Styles
	m.ctx.Focus = m.focus
	rows := make([]string, 0, h)
	rows = append(rows, m.header(w))
	if m.lay.taskLine {
		rows = append(rows, panel.TaskLine(st, m.ctx.State.Lesson, w))
	}
	rows = append(rows, m.body()...)
	status, more := m.statusLine(w)
	rows = append(rows, status)
	rows = append(rows, m.footer(w, more))
	return strings.Join(rows, "\n")
}

func (m *Model) tooSmallView(w, h int) string { return tooSmall(w, h) }

// footer is the help bar. The keys that lead to everything else — : for a
// command, ? for every key — stay at its end at every width; the others
// give way, the last first, and all of them to the rest of a status too
// long for its own row (status).
func (m *Model) footer(w int, status string) string {
	k := m.ctx.Keys
	var keep, rest []key.Binding
	for _, b := range m.ShortHelp() {
		switch {
		case !b.Enabled():
		case b.Help() == k.Prompt.Help() || b.Help() == k.Help.Help():
			keep = append(keep, b)
		default:
			rest = append(rest, b)
		}
	}
	hm := m.help
	hm.Width = 0
	sep := hm.Styles.ShortSeparator.Inline(true).Render(hm.ShortSeparator)
	more := hm.Styles.Ellipsis.Inline(true).Render(hm.Ellipsis)
	tail := hm.ShortHelpView(keep)
	m.footerKept = draw.Width(tail)
	if status != "" {
		return draw.Fit(draw.Cut(status, w-draw.Width(tail)-2), w-draw.Width(tail)) + tail
	}
	room := w - draw.Width(tail) - draw.Width(sep)
	var head []string
	used := 0
	for i, b := range rest {
		item := hm.ShortHelpView([]key.Binding{b})
		need := draw.Width(item)
		if len(head) > 0 {
			need += draw.Width(sep)
		}
		if i < len(rest)-1 {
			need += draw.Width(sep) + draw.Width(more) // room to say more follow
		}
		if used+need > room {
			head = append(head, more)
			break
		}
		head = append(head, item)
		used += draw.Width(item) + draw.Width(sep)
	}
	if len(head) == 0 {
		return draw.Fit(tail, w)
	}
	return draw.Fit(strings.Join(head, sep)+sep+tail, w)
}

// header: what is open, and the lab clock; in history, the banner.
func (m *Model) header(w int) string {
	st := m.ctx.Styles
	s := m.ctx.State
	if m.ctx.InHistory {
		text := fmt.Sprintf(" ◀ HISTORY %s — %d back — press ] to step forward, esc to return to live ",
			s.Time.Format("15:04:05.000"), m.hist.stepsBack())
		if ev := lastEvent(s); ev.Text != "" && draw.Width(text)+10 < w {
			text += "· last event: " + ev.Text + " "
		}
		return st.Banner.Render(draw.Fit(text, w))
	}
	// The right side: the jobs, the clock, the timing. At narrow widths the
	// jobs shrink (shorter names and bars, then only the first) before
	// the timing goes, so the clock and its state stay in view.
	warn := ""
	switch {
	case m.opts.ReadOnly:
		warn = "  REPLAY (read-only)"
	case m.opts.Follow:
		warn = "  FOLLOWING (read-only)"
	}
	title, tail := m.ctx.Title, ""
	if ls := s.Lesson; ls != nil {
		title, tail = ls.Title, fmt.Sprintf(" · step %d/%d", ls.Step, ls.Steps)
	}
	if c := m.live; c != nil && c.Class != nil && !m.opts.Follow {
		// The teacher's class: how many are connected, how many answered.
		warn = "  " + classWord(c.Class, w < 100)
	}
	// The left side keeps "mqlab │ ", the warning and the title's head
	// ("Why a queue"): the jobs shorten and go before the head does. The
	// rest of the title comes before a paused clock's time and the
	// timing, and after why the clock is held and the jobs.
	head := titleHead(title)
	fixed := 10 + draw.Width(warn) + draw.Width(tail)
	var r draw.Line
	var form headerForm
	for _, form = range headerForms {
		r = m.headerRight(form)
		if r.Width() <= w-fixed-draw.Width(head) {
			break
		}
	}
	if r.Width() > w-fixed-draw.Width(title) {
		lean := form
		lean.timing = false
		if s.Clock.Paused {
			lean.time = false
		}
		if lr := m.headerRight(lean); lr.Width() <= w-fixed-draw.Width(title) {
			r = lr
		}
	}
	room := w - fixed - draw.Width(head)
	// The left side: what is open. A long title gives way before the step
	// number and the right side's clock.
	rw := min(r.Width(), room)
	var l draw.Line
	l.Add(&st.Accent, "mqlab")
	l.Add(&st.Faint, " │ ")
	l.Add(&st.Header, shortTitle(title, max(8, w-rw-2-l.Width()-draw.Width(tail)-draw.Width(warn))))
	l.Add(&st.Muted, tail)
	l.Add(&st.Warn, warn)
	if l.Width()+r.Width()+2 > w {
		return l.Fit(w-rw-2) + "  " + draw.Fit(r.String(), rw)
	}
	l.Pad(w - r.Width())
	l.Append(&r)
	return l.String()
}

// titleHead is what a title says before its colon or question mark
// ("Why a queue", "How many partitions?"), or its first 28 cells.
func titleHead(title string) string {
	for _, sep := range []string{": ", "? "} {
		if i := strings.Index(title, sep); i > 0 {
			return strings.TrimSuffix(title[:i+1], ":")
		}
	}
	return draw.Cut(title, 28)
}

// shortTitle fits a title into w cells so that what shows reads whole:
// the title, else its head, else as many whole words as fit.
func shortTitle(title string, w int) string {
	if draw.Width(title) <= w {
		return title
	}
	if head := titleHead(title); draw.Width(head) <= w && !strings.HasSuffix(head, "…") {
		return head
	}
	cut := draw.Cut(title, w)
	if i := strings.LastIndexByte(strings.TrimSuffix(cut, "…"), ' '); i > w/2 {
		return strings.TrimRight(cut[:i], ",;:") + "…"
	}
	return cut
}

// classWord is the teacher's header's word on the class: "12 connected ·
// 9/10 answered" (short: "12 in · 9/10 ans.").
func classWord(r *view.Roster, short bool) string {
	if short {
		s := fmt.Sprintf("%d in class", len(r.Students))
		if r.Question {
			s += fmt.Sprintf(" · %d/%d", r.Answered, r.Following)
		}
		return s
	}
	s := fmt.Sprintf("%d connected", len(r.Students))
	if r.Question {
		s += fmt.Sprintf(" · %d of %d answered", r.Answered, r.Following)
	}
	return s + " (w)"
}

// showRoster opens, over the body, who is connected to the teacher's
// class and whether each answered the question on screen.
func (m *Model) showRoster() {
	r := m.live.Class
	if len(r.Students) == 0 {
		m.setStatus(statusInfo, "nobody is connected: students join with ssh, as the lesson list said")
		return
	}
	lines := []string{fmt.Sprintf("%d connected:", len(r.Students))}
	for _, st := range r.Students {
		what := "a lab of their own"
		if st.Follows {
			what = "follows your lab"
			if r.Question && st.Answered {
				what += " · answered"
			} else if r.Question {
				what += " · not answered yet"
			}
		}
		if st.Sessions > 1 {
			what += fmt.Sprintf(" · %d sessions", st.Sessions)
		}
		lines = append(lines, "  "+st.Name+"  "+what)
	}
	m.showOutput("Who is connected", strings.Join(lines, "\n"))
}

// headerForm is how much the header's right side draws. jobs 0 draws
// every job in full; 1 shortens names and bars; 2 draws the first job
// only, with how many more run; 3 draws no job. held 2 says why a paused
// lesson holds the clock and how to let it run ("reading — any command
// resumes"), 1 only why, 0 neither.
type headerForm struct {
	jobs, held   int
	time, timing bool
	addr         bool // the Kafka and SQS listeners' addresses
}

// headerForms run from the fullest to the barest. Jobs and the timing go
// first; while the clock is held, what lets it run outranks the lab time,
// which stands still anyway. The address a learner points their own
// client at outranks how to let the clock run, and gives way only to why
// it is held.
var headerForms = []headerForm{
	{0, 2, true, true, true}, {1, 2, true, true, true}, {2, 2, true, true, true}, {2, 2, true, false, true},
	{3, 2, true, false, true}, {3, 2, false, false, true}, {3, 1, true, false, true}, {3, 1, false, false, true},
	{3, 1, true, false, false}, {3, 1, false, false, false}, {3, 0, true, false, false}, {3, 0, false, false, false},
}

// headerRight is the header's right side: the jobs with their progress,
// whether the clock runs and how fast (or why it is held), the lab time,
// the timing preset, as much of each as form says.
func (m *Model) headerRight(form headerForm) draw.Line {
	level, timing := form.jobs, form.timing
	st := m.ctx.Styles
	s := m.ctx.State
	var r draw.Line
	for i, j := range s.Jobs {
		if level >= 3 || level == 2 && i > 0 {
			if level == 2 {
				r.Add(&st.Muted, fmt.Sprintf("+%d more  ", len(s.Jobs)-1))
			}
			break
		}
		name, bw := j.Name, 8
		if level >= 1 {
			name, bw = shortJob(name), 5
		}
		r.Add(&st.Muted, name+" ")
		if j.Total > 0 {
			f := float64(j.Done) / float64(j.Total)
			r.AddStyled(draw.Bar(st, f, bw), bw)
			r.Add(&st.Muted, fmt.Sprintf(" %d%%  ", int(f*100)))
		} else {
			r.Add(&st.Muted, fmt.Sprintf("%d  ", j.Done))
		}
	}
	speed := s.Clock.Speed
	if speed == 0 {
		speed = 1
	}
	switch {
	case m.opts.Over != nil && m.opts.Over():
		r.Add(&st.Warn, "■ run over")
	case s.Clock.Paused:
		r.Add(&st.Warn, "‖ PAUSED")
		if why, _, _ := strings.Cut(s.Clock.Held, " — "); why != "" && form.held > 0 {
			if form.held == 2 {
				why = s.Clock.Held
			}
			r.Add(&st.Muted, " · "+why)
		}
	default:
		r.Add(&st.OK, "▶ running")
		r.Add(&st.Text, " "+speedWord(speed))
		if b := s.Clock.Behind; b >= 0.1 {
			// Lab time waited for the machine: say how fast it really ran.
			actual := speedWord(math.Round(speed*(1-b)*10) / 10)
			if level == 0 {
				r.Add(&st.Warn, " · ≈"+actual+", the machine is behind")
			} else {
				r.Add(&st.Warn, " ≈"+actual)
			}
		}
	}
	if !s.Time.IsZero() && (form.time || !s.Clock.Paused) {
		r.Add(&st.Muted, "  "+s.Time.Format("15:04:05.0"))
	}
	if s.Timing != "" && timing {
		r.Add(&st.Faint, "  "+s.Timing)
	}
	if s.Kafka != nil && form.addr {
		r.Add(&st.Faint, "  kafka ")
		r.Add(&st.Text, panel.KafkaSeed(s.Kafka))
	}
	if s.SQS != "" && form.addr {
		r.Add(&st.Faint, "  sqs ")
		r.Add(&st.Text, strings.TrimPrefix(s.SQS, "http://"))
	}
	return r
}

// shortJob is a job's name at narrow widths: its first words, "check"
// for a check's drain.
func shortJob(name string) string {
	if strings.HasPrefix(name, "check:") {
		return "check"
	}
	if i := strings.Index(name, " ("); i > 0 { // "load orders (waiting)"
		name = name[:i]
	}
	if i := strings.Index(name, " as "); i > 0 {
		name = name[:i]
	}
	return name
}

// statusLine is the outcome of what the learner did last, or the prompt
// they type in. A status too long for its row goes on in more, which the
// footer shows in place of its keys, under the status's text.
func (m *Model) statusLine(w int) (row, more string) {
	st := m.ctx.Styles
	if m.prompt.active() {
		return m.prompt.view(st, w), ""
	}
	var l draw.Line
	mark, ms, text, ts := "", &st.Muted, m.status, &st.Text
	switch m.statusKind {
	case statusOK:
		mark, ms = draw.SymOK+" ", &st.OK
	case statusErr:
		mark, ms, ts = draw.SymFail+" ", &st.Fail, &st.Fail
	case statusAsk:
		mark, ms, ts = "? ", &st.Warn, &st.Warn
	case statusBusy:
		l.Add(&st.Warn, draw.SymPending+" running ")
		l.Add(&st.Text, m.status)
		l.Add(&st.Faint, "  (esc cancels)")
		return l.Fit(w), ""
	default:
		if m.status == "" {
			l.Add(&st.Faint, "press : to type a command, ? for every key")
			return l.Fit(w), ""
		}
		ts = &st.Muted
	}
	l.Add(ms, mark)
	lead := l.Width()
	if lead+draw.Width(text) > w && text != "" {
		// Break at the last space that fits; the rest goes on below,
		// under the text rather than the mark.
		head, _ := draw.SplitAt(text, w-lead)
		if i := strings.LastIndexByte(head, ' '); i > 0 {
			l.Add(ts, head[:i])
			return l.Fit(w), draw.Spaces(lead) + ts.Render(strings.TrimSpace(text[i:]))
		}
	}
	l.Add(ts, text)
	return l.Fit(w), ""
}

// body draws the slots, or the full help or a command's output over them.
func (m *Model) body() []string {
	b := m.lay.body
	switch {
	case m.showHelp:
		return strings.Split(draw.Frame(m.ctx.Styles, []string{"Help"}, 0, true, m.helpView(b.w-2, b.h-2), b.w, b.h), "\n")
	case m.output != nil:
		var wrapped []string
		for _, l := range m.output {
			wrapped = append(wrapped, draw.WrapHanging(l, b.w-2)...)
		}
		rows, off := draw.Window(wrapped, m.outputOff, b.h-2, m.ctx.Styles)
		m.outputOff = off
		body := draw.Block(rows, b.w-2, b.h-2)
		return strings.Split(draw.Frame(m.ctx.Styles, []string{m.outputTitle + " · esc closes"}, 0, true, body, b.w, b.h), "\n")
	}
	frames := make([][]string, len(m.lay.slots))
	for si := range m.lay.slots {
		s := &m.lay.slots[si]
		id := s.panels[s.active]
		p := m.panels[id]
		frames[si] = strings.Split(draw.Frame(m.ctx.Styles, m.tabs(s), s.active, id == m.focus, p.View(), s.r.w, s.r.h), "\n")
	}
	// Every row of the body is covered by slots side by side.
	order := make([]int, len(m.lay.slots))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, c int) bool { return m.lay.slots[order[a]].r.x < m.lay.slots[order[c]].r.x })
	rows := make([]string, b.h)
	var sb strings.Builder
	for y := 0; y < b.h; y++ {
		sb.Reset()
		ay := b.y + y
		for _, si := range order {
			s := m.lay.slots[si]
			if ay >= s.r.y && ay < s.r.y+s.r.h {
				sb.WriteString(frames[si][ay-s.r.y])
			}
		}
		rows[y] = sb.String()
	}
	return rows
}

// helpView is the '?' screen: every key, what the symbols mean, and how
// to reach the command language. Its columns stand side by side where
// they fit and one under another where they do not; what the body cannot
// hold scrolls with ↑/↓, so every key is there at 80x24 too.
func (m *Model) helpView(w, h int) string {
	rows, off := draw.WindowNote(m.helpRows(w), m.helpOff, h, m.ctx.Styles, "(↑/↓ scroll)")
	m.helpOff = off
	return draw.Block(rows, w, h)
}

// helpRows is the whole '?' screen at width w, before it is cut to fit.
func (m *Model) helpRows(w int) []string {
	st := m.ctx.Styles
	hm := m.help
	hm.Width = 0
	// The full help lists every key the screen takes, also those that mean
	// nothing at this moment (an answer, a hint); not those its kind of
	// screen never takes (a follower's kill, a recording's next step).
	off := map[key.Help]bool{}
	for _, b := range m.modeOff() {
		off[b.Help()] = true
	}
	if !m.ctx.Keys.Lessons.Enabled() { // there only when the screen came from the lessons
		off[m.ctx.Keys.Lessons.Help()] = true
	}
	if !m.ctx.Keys.Roster.Enabled() { // there only on a teacher's shared screen
		off[m.ctx.Keys.Roster.Help()] = true
	}
	var blocks []string
	for _, g := range m.FullHelp() {
		var col []key.Binding
		for _, b := range g {
			if !off[b.Help()] {
				b.SetEnabled(true)
				col = append(col, b)
			}
		}
		if len(col) > 0 {
			blocks = append(blocks, hm.FullHelpView([][]key.Binding{col}))
		}
	}
	var rows []string
	const gap = "    "
	for len(blocks) > 0 {
		n := 1
		width := lipgloss.Width(blocks[0])
		for n < len(blocks) && width+len(gap)+lipgloss.Width(blocks[n]) <= w {
			width += len(gap) + lipgloss.Width(blocks[n])
			n++
		}
		line := []string{blocks[0]}
		for _, b := range blocks[1:n] {
			line = append(line, gap, b)
		}
		if len(rows) > 0 {
			rows = append(rows, "")
		}
		rows = append(rows, strings.Split(lipgloss.JoinHorizontal(lipgloss.Top, line...), "\n")...)
		blocks = blocks[n:]
	}
	rows = append(rows, "", st.Title.Render("What the symbols mean"))
	legend := [][2]string{
		{draw.SymLeader, "leader of a partition (the word says it too)"},
		{draw.SymCommitted + "7 " + draw.SymUncommitted + "7 " + draw.SymLearning + "7", "committed / not yet on a majority / committed, not yet heard here"},
		{"[ | " + draw.SymSegment + " …", "the log's first offset / the high-water mark / a new segment file begins / more before"},
		{draw.SymTruncated, "a replica cut its uncommitted tail: those entries are gone"},
		{draw.SymOK + " " + draw.SymFail, "holds / fails; " + draw.SymFail + " also marks a node that is down"},
		{draw.SymIsolated, "a node cut off from its peers (and clients, when isolated)"},
		{draw.SymSelected, "the selected node: k, r and i act on it"},
		{"┏━┓", "the focused panel: tab moves focus, ↑/↓ scroll it"},
	}
	if m.opts.Follow {
		legend[6][1] = "the selected node"
	}
	for _, l := range legend {
		rows = append(rows, draw.WrapHanging("  "+st.Key.Render(draw.Fit(l[0], 8))+" "+st.Text.Render(l[1]), w)...)
	}
	notes := []string{"Every key runs a lab command you could type at ':' — k on n2 is  :kill n2.",
		"Type :help for the commands. ? or esc closes this."}
	if m.opts.Follow {
		notes = []string{"This is the teacher's lab: only the teacher changes it. Answer a question with its letter, or the number it asks for (or type :predict b).",
			"Type :help for what you can type. ? or esc closes this."}
	}
	rows = append(rows, "")
	for _, n := range notes {
		rows = append(rows, draw.WrapHanging(st.Muted.Render(n), w)...)
	}
	return rows
}
