package tui

import (
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DemoSource is a small pretend lab: three nodes, a topic of three
// partitions replicated on all of them, a consumer group, a queue and an
// outbox table, driven by the same command lines as the real lab. Nothing
// in it is a broker: it exists so the screen can be shown, tried and
// tested before (and without) a running lab. Its raft is a cartoon —
// followers copy the leader a moment later, elections take about a
// second and a half, a returning replica's divergent tail is cut — enough
// to show every panel doing its job.
type DemoSource struct {
	mu      sync.Mutex
	rnd     *rand.Rand
	now     time.Time
	speed   float64
	paused  bool
	nodes   []*demoNode
	parts   []*demoPart
	tl      []TimelineLine
	ch      chan struct{}
	stop    chan struct{}
	stopped chan struct{}

	produced   int64
	nextProd   time.Time
	nextSample time.Time
	lost       int64
	checkedAt  time.Time

	backlog, lag []float64
	group        Group
	committed    []int64
	queue        Queue
	outbox       [][]string
	outboxTotal  int
	processed    [][]string

	step       int // lesson step, 1-based
	chosen     int
	predEpoch  uint64
	restartSaw bool
	killSaw    bool
}

type demoNode struct {
	id       string
	up       bool
	isolated bool
}

type demoPart struct {
	name     string
	reps     []*demoReplica
	electAt  time.Time
	logStart int64
}

type demoReplica struct {
	node  int
	role  string
	epoch uint64
	base  int64 // offset of log[0]
	log   []demoEntry
	hwm   int64
	trunc *Truncation
}

type demoEntry struct {
	epoch uint64
	key   string
	at    time.Time
}

func (r *demoReplica) leo() int64 { return r.base + int64(len(r.log)) }

func (r *demoReplica) epochAt(off int64) (uint64, bool) {
	i := off - r.base
	if i < 0 || i >= int64(len(r.log)) {
		return 0, false
	}
	return r.log[i].epoch, true
}

const (
	demoElection = 1500 * time.Millisecond // a leader's death to its successor
	demoReplLag  = 600 * time.Millisecond  // how long an entry waits before followers copy it
	demoProduce  = 250 * time.Millisecond
	demoTick     = 100 * time.Millisecond
	demoWindow   = 32
)

// demoStart is the lab clock's first reading in the demo.
var demoStart = time.Date(2025, 3, 14, 12, 3, 30, 0, time.UTC)

// NewDemo starts a demo lab that runs on its own clock until Close.
func NewDemo() *DemoSource {
	d := newDemo(time.Now().UnixNano(), demoStart)
	d.stop = make(chan struct{})
	d.stopped = make(chan struct{})
	go d.run()
	return d
}

// newDemo builds a demo that only moves when advanced: tests drive it.
func newDemo(seed int64, start time.Time) *DemoSource {
	d := &DemoSource{
		rnd:    rand.New(rand.NewSource(seed)),
		now:    start,
		speed:  1,
		ch:     make(chan struct{}, 1),
		step:   1,
		chosen: -1,
	}
	for i := 1; i <= 3; i++ {
		d.nodes = append(d.nodes, &demoNode{id: "n" + strconv.Itoa(i), up: true})
	}
	for p := 0; p < 3; p++ {
		pt := &demoPart{name: fmt.Sprintf("orders/%d", p), logStart: 1480}
		for n := 0; n < 3; n++ {
			r := &demoReplica{node: n, role: "follower", epoch: 7, base: 1480}
			for o := 0; o < 16+p; o++ {
				r.log = append(r.log, demoEntry{epoch: 7, key: fmt.Sprintf("order-%d", 860+o), at: start})
			}
			if n == p {
				r.role = "leader"
			}
			r.hwm = r.leo()
			pt.reps = append(pt.reps, r)
		}
		d.parts = append(d.parts, pt)
	}
	d.group = Group{Name: "billing", Topic: "orders", Generation: 3, State: "stable", Members: []Member{
		{ID: "c1", Partitions: []string{"orders/0", "orders/1"}, State: "up"},
		{ID: "c2", Partitions: []string{"orders/2"}, State: "up"},
		{ID: "c3", State: "up"},
	}}
	d.committed = []int64{1490, 1492, 1494}
	d.queue = Queue{Name: "receipts", Leader: "n2", Epoch: 4, DLQ: "receipts-dlq", DLQDepth: 1,
		MaxReceives: 5, Visibility: 5 * time.Second}
	d.processed = [][]string{{"producer-17", "12:03:29"}, {"producer-18", "12:03:29"}}
	d.nextProd = start
	d.nextSample = start
	d.event(start, "leader-elected", "n1 leads orders/0 at epoch 7")
	d.event(start, "leader-elected", "n2 leads orders/1 at epoch 7")
	d.event(start, "leader-elected", "n3 leads orders/2 at epoch 7")
	return d
}

func (d *DemoSource) run() {
	defer close(d.stopped)
	t := time.NewTicker(demoTick)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			d.mu.Lock()
			if !d.paused {
				total := time.Duration(float64(demoTick) * d.speed)
				for total > 0 {
					dt := min(total, demoTick)
					d.advance(dt)
					total -= dt
				}
			}
			d.mu.Unlock()
			d.signal()
		}
	}
}

// Close stops the demo's clock.
func (d *DemoSource) Close() {
	if d.stop != nil {
		close(d.stop)
		<-d.stopped
		d.stop = nil
	}
}

func (d *DemoSource) signal() {
	select {
	case d.ch <- struct{}{}:
	default:
	}
}

// Changes signals every tick of the demo's clock.
func (d *DemoSource) Changes() <-chan struct{} { return d.ch }

func (d *DemoSource) event(at time.Time, kind, text string) {
	d.tl = append(d.tl, TimelineLine{Time: at, Kind: kind, Text: text})
	if len(d.tl) > 300 {
		d.tl = d.tl[len(d.tl)-200:]
	}
}

// advance moves the demo's lab time by dt (at most a tick).
func (d *DemoSource) advance(dt time.Duration) {
	d.now = d.now.Add(dt)
	d.elect()
	for !d.nextProd.After(d.now) {
		d.produce(d.nextProd)
		d.nextProd = d.nextProd.Add(demoProduce)
	}
	for _, p := range d.parts {
		d.replicate(p)
	}
	d.consume(dt)
	d.work(dt)
	if !d.nextSample.After(d.now) {
		d.sample()
		d.nextSample = d.nextSample.Add(time.Second)
	}
}

func (d *DemoSource) reachable(n int) bool { return d.nodes[n].up && !d.nodes[n].isolated }

// leader is the replica leading at the highest epoch that the others can
// reach; a stale leader on an isolated node does not count.
func (d *DemoSource) leader(p *demoPart) *demoReplica {
	var best *demoReplica
	for _, r := range p.reps {
		if r.role == "leader" && d.reachable(r.node) && (best == nil || r.epoch > best.epoch) {
			best = r
		}
	}
	return best
}

func (d *DemoSource) elect() {
	for _, p := range d.parts {
		if d.leader(p) != nil {
			p.electAt = time.Time{}
			continue
		}
		if p.electAt.IsZero() {
			p.electAt = d.now.Add(demoElection)
			for _, r := range p.reps {
				if d.reachable(r.node) && r.role == "follower" {
					r.role = "candidate"
				}
			}
			continue
		}
		if d.now.Before(p.electAt) {
			continue
		}
		var cands []*demoReplica
		var top uint64
		for _, r := range p.reps {
			if d.reachable(r.node) {
				cands = append(cands, r)
			}
			top = max(top, r.epoch)
		}
		if len(cands) < len(p.reps)/2+1 {
			p.electAt = d.now.Add(demoElection) // no majority: try again later
			continue
		}
		win := cands[0]
		for _, c := range cands[1:] { // the most up-to-date log wins the vote
			we, _ := win.epochAt(win.leo() - 1)
			ce, _ := c.epochAt(c.leo() - 1)
			if ce > we || (ce == we && c.leo() > win.leo()) {
				win = c
			}
		}
		epoch := top + 1
		for _, c := range cands {
			c.epoch = epoch
			c.role = "follower"
		}
		win.role = "leader"
		p.electAt = time.Time{}
		d.event(d.now, "leader-elected", fmt.Sprintf("%s leads %s at epoch %d", d.nodes[win.node].id, p.name, epoch))
	}
}

func (d *DemoSource) produce(at time.Time) {
	p := d.parts[int(d.produced)%len(d.parts)]
	d.produced++
	l := d.leader(p)
	if l == nil {
		d.event(at, "produce-failed", fmt.Sprintf("order %d to %s: no leader, the producer retries", 880+d.produced, p.name))
		return
	}
	key := fmt.Sprintf("order-%d", 880+d.produced)
	l.log = append(l.log, demoEntry{epoch: l.epoch, key: key, at: at})
	// The outbox row a service wrote with the order.
	d.outboxTotal++
	d.outbox = append(d.outbox, []string{strconv.Itoa(d.outboxTotal), key, "pending", at.Format("15:04:05.0")})
	if len(d.outbox) > 8 {
		d.outbox = d.outbox[len(d.outbox)-8:]
	}
}

// replicate brings the reachable followers in line with the leader:
// a divergent tail is cut, then older entries are copied and the
// high-water mark follows the majority.
func (d *DemoSource) replicate(p *demoPart) {
	l := d.leader(p)
	if l == nil {
		return
	}
	for _, r := range p.reps {
		if r == l || !d.reachable(r.node) {
			continue
		}
		if r.epoch > l.epoch {
			continue
		}
		if r.role == "leader" || r.role == "candidate" {
			if r.role == "leader" {
				d.event(d.now, "stepped-down", fmt.Sprintf("%s steps down on %s: epoch %d is over", d.nodes[r.node].id, p.name, r.epoch))
			}
			r.role = "follower"
		}
		r.epoch = l.epoch
		// First offset where the logs disagree.
		div := r.leo()
		for off := max(r.base, l.base); off < r.leo(); off++ {
			le, ok := l.epochAt(off)
			re, _ := r.epochAt(off)
			if !ok || le != re {
				div = off
				break
			}
		}
		if div < r.leo() {
			cut := r.log[div-r.base:]
			t := &Truncation{At: d.now, From: div, To: r.leo()}
			for _, e := range cut {
				t.Epochs = append(t.Epochs, e.epoch)
			}
			r.log = r.log[:div-r.base]
			r.trunc = t
			d.lost += int64(len(cut))
			what := fmt.Sprintf("offsets %d–%d", t.From, t.To-1)
			if t.To-t.From == 1 {
				what = fmt.Sprintf("offset %d", t.From)
			}
			d.event(d.now, "truncation", fmt.Sprintf("%s cut %s of %s (epoch %d): never committed, written by a leader that lost",
				d.nodes[r.node].id, what, p.name, t.Epochs[0]))
		}
		for r.leo() < l.leo() {
			e := l.log[r.leo()-l.base]
			if d.now.Sub(e.at) < demoReplLag {
				break
			}
			r.log = append(r.log, e)
		}
	}
	// The high-water mark: the highest offset a majority holds.
	var hwm int64 = l.hwm
	for off := l.leo(); off > l.hwm; off-- {
		n := 0
		le, _ := l.epochAt(off - 1)
		for _, r := range p.reps {
			if re, ok := r.epochAt(off - 1); ok && re == le && (r == l || d.reachable(r.node)) {
				n++
			}
		}
		if n >= len(p.reps)/2+1 {
			hwm = off
			break
		}
	}
	l.hwm = hwm
	for _, r := range p.reps {
		if r != l && d.reachable(r.node) {
			r.hwm = min(l.hwm, r.leo())
		}
	}
	// Old entries leave the window: keep the logs short.
	for _, r := range p.reps {
		if len(r.log) > 200 {
			drop := len(r.log) - 150
			r.log = append([]demoEntry(nil), r.log[drop:]...)
			r.base += int64(drop)
		}
	}
	p.logStart = l.base
}

func (d *DemoSource) consume(dt time.Duration) {
	for i, p := range d.parts {
		l := d.leader(p)
		if l == nil {
			continue
		}
		if d.rnd.Float64() < float64(dt)/float64(600*time.Millisecond) && d.committed[i] < l.hwm {
			d.committed[i] = min(l.hwm, d.committed[i]+int64(1+d.rnd.Intn(3)))
		}
	}
	for i := range d.outbox {
		if d.outbox[i][2] == "pending" && d.rnd.Float64() < 0.1 {
			d.outbox[i][2] = "sent"
		}
	}
}

func (d *DemoSource) work(dt time.Duration) {
	q := &d.queue
	if d.rnd.Float64() < float64(dt)/float64(700*time.Millisecond) {
		q.Ready++
	}
	if q.Ready > 0 && q.InFlight < 3 && d.rnd.Float64() < 0.2 {
		q.Ready--
		q.InFlight++
		id := fmt.Sprintf("rcpt-%d", 881+d.rnd.Intn(100))
		q.Messages = append(q.Messages, QueueMessage{ID: id, Value: "receipt " + id[5:], State: "in-flight",
			Worker: fmt.Sprintf("w%d", 1+d.rnd.Intn(2)), Receives: 1 + d.rnd.Intn(3), Due: q.Visibility})
	}
	kept := q.Messages[:0]
	for _, m := range q.Messages {
		m.Due -= dt
		if m.Due <= 0 {
			q.InFlight--
			if d.rnd.Float64() < 0.3 { // not acked: it comes back
				d.event(d.now, "redelivery", fmt.Sprintf("%s came back after its visibility timeout (received %d×)", m.ID, m.Receives))
				q.Ready++
			} else {
				d.processed = append(d.processed, []string{"w-" + m.ID, d.now.Format("15:04:05")})
				if len(d.processed) > 6 {
					d.processed = d.processed[len(d.processed)-6:]
				}
			}
			continue
		}
		kept = append(kept, m)
	}
	q.Messages = kept
}

func (d *DemoSource) sample() {
	var lag int64
	for i, p := range d.parts {
		if l := d.leader(p); l != nil {
			lag += l.hwm - d.committed[i]
		}
	}
	d.lag = appendCapped(d.lag, float64(lag), 240)
	d.backlog = appendCapped(d.backlog, float64(d.queue.Ready+d.queue.InFlight), 240)
}

func appendCapped(xs []float64, v float64, n int) []float64 {
	xs = append(xs, v)
	if len(xs) > n {
		xs = xs[len(xs)-n:]
	}
	return xs
}

// Exec runs the commands the screen's keys send, and a few more.
func (d *DemoSource) Exec(ctx context.Context, line string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	defer d.signal()
	f := strings.Fields(line)
	if len(f) == 0 {
		return "", nil
	}
	arg := ""
	if len(f) > 1 {
		arg = f[1]
	}
	switch f[0] {
	case "kill", "restart", "isolate":
		n, err := d.node(arg)
		if err != nil {
			return "", err
		}
		nd := d.nodes[n]
		switch f[0] {
		case "kill":
			if !nd.up {
				return "", fmt.Errorf("%s is already down", nd.id)
			}
			nd.up = false
			d.killSaw = true
			for _, p := range d.parts {
				for _, r := range p.reps {
					if r.node == n {
						r.role = "down"
					}
				}
			}
			d.event(d.now, "node-killed", nd.id+" killed: its memory is gone, its disk stays")
			return nd.id + " is down", nil
		case "restart":
			if nd.up {
				return "", fmt.Errorf("%s is already up", nd.id)
			}
			nd.up = true
			for _, p := range d.parts {
				for _, r := range p.reps {
					if r.node == n {
						r.role = "follower"
					}
				}
			}
			d.restartSaw = true
			d.event(d.now, "node-restarted", nd.id+" restarted from its disk")
			return nd.id + " is up", nil
		default:
			nd.isolated = true
			d.event(d.now, "link-cut", nd.id+" isolated: every link cut")
			return nd.id + " is isolated", nil
		}
	case "heal":
		for _, n := range d.nodes {
			n.isolated = false
		}
		d.event(d.now, "link-healed", "every link restored")
		return "every link restored", nil
	case "pause":
		d.paused = true
		return "lab time stopped", nil
	case "resume":
		d.paused = false
		return "lab time runs", nil
	case "speed":
		v, err := strconv.ParseFloat(strings.TrimSuffix(arg, "x"), 64)
		if err != nil || v <= 0 || v > 100 {
			return "", fmt.Errorf("speed wants a factor like 2x or 0.5x, not %q", arg)
		}
		d.speed = v
		return "lab time runs at " + arg, nil
	case "check":
		d.checkedAt = d.now
		return fmt.Sprintf("lost %d, duplicate_deliveries 0", d.lost), nil
	case "lesson":
		switch arg {
		case "next":
			if d.step >= len(demoSteps) {
				return "", fmt.Errorf("this is the last step")
			}
			d.step++
		case "prev":
			if d.step <= 1 {
				return "", fmt.Errorf("this is the first step")
			}
			d.step--
		default:
			return "", fmt.Errorf("lesson next or lesson prev, not %q", arg)
		}
		d.chosen = -1
		return fmt.Sprintf("step %d: %s", d.step, demoSteps[d.step-1].title), nil
	case "predict":
		if len(arg) != 1 || arg[0] < 'a' || arg[0] > 'c' {
			return "", fmt.Errorf("predict a, b or c")
		}
		d.chosen = int(arg[0] - 'a')
		d.predEpoch = 0
		for _, r := range d.parts[0].reps {
			d.predEpoch = max(d.predEpoch, r.epoch)
		}
		return "noted: " + arg, nil
	case "help":
		return strings.Join([]string{
			"The demo understands:",
			"  kill NODE · restart NODE · isolate NODE · heal",
			"  pause · resume · speed 2x",
			"  check · lesson next · lesson prev · predict a|b|c",
			"The real lab understands every command of the language.",
		}, "\n"), nil
	}
	return "", fmt.Errorf("the demo does not simulate %q (the real lab does); try help", f[0])
}

func (d *DemoSource) node(arg string) (int, error) {
	if strings.HasPrefix(arg, "leader(") && strings.HasSuffix(arg, ")") {
		name := arg[len("leader(") : len(arg)-1]
		for _, p := range d.parts {
			if p.name == name {
				if l := d.leader(p); l != nil {
					return l.node, nil
				}
				return 0, fmt.Errorf("%s has no leader right now", name)
			}
		}
		return 0, fmt.Errorf("no partition %q", name)
	}
	for i, n := range d.nodes {
		if n.id == arg {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no node %q: the nodes are n1, n2 and n3", arg)
}

// View copies the demo's state into a ViewState.
func (d *DemoSource) View() ViewState {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := ViewState{Time: d.now, Clock: Clock{Speed: d.speed, Paused: d.paused}, Timing: "classroom"}
	for i, n := range d.nodes {
		nv := Node{ID: n.id, Up: n.up, Isolated: n.isolated}
		if n.up {
			for _, p := range d.parts {
				for _, r := range p.reps {
					if r.node == i && r.role == "leader" {
						nv.Leads = append(nv.Leads, p.name)
					}
				}
			}
			if i == 1 {
				nv.Leads = append(nv.Leads, "receipts")
			}
		}
		v.Nodes = append(v.Nodes, nv)
	}
	for _, p := range d.parts {
		pv := Partition{Name: p.name}
		var top uint64
		for _, r := range p.reps {
			if d.nodes[r.node].up {
				top = max(top, r.epoch)
			}
		}
		pv.Epoch = top
		if l := d.leader(p); l != nil {
			pv.Leader, pv.Epoch = d.nodes[l.node].id, l.epoch
		}
		for _, r := range p.reps {
			rv := Replica{Node: d.nodes[r.node].id, Role: r.role, Epoch: r.epoch, LogStart: p.logStart,
				HWM: r.hwm, LEO: r.leo()}
			if r.trunc != nil {
				t := *r.trunc
				t.Epochs = append([]uint64(nil), t.Epochs...)
				rv.Truncation = &t
			}
			from := max(0, len(r.log)-demoWindow)
			for i, e := range r.log[from:] {
				off := r.base + int64(from+i)
				rv.Entries = append(rv.Entries, Entry{Offset: off, Epoch: e.epoch, Key: e.key, Committed: off < r.hwm})
			}
			pv.Replicas = append(pv.Replicas, rv)
		}
		v.Partitions = append(v.Partitions, pv)
	}
	g := d.group
	g.Members = append([]Member(nil), g.Members...)
	g.Lag, g.LagSeconds = 0, 0
	for i, p := range d.parts {
		var hwm int64
		if l := d.leader(p); l != nil {
			hwm = l.hwm
		} else {
			hwm = p.reps[0].hwm
		}
		lag := max(0, hwm-d.committed[i])
		secs := float64(lag) * demoProduce.Seconds() * float64(len(d.parts))
		g.Offsets = append(g.Offsets, GroupOffset{Partition: p.name, Committed: d.committed[i], HWM: hwm, Lag: lag, LagSeconds: secs})
		g.Lag += lag
		g.LagSeconds = max(g.LagSeconds, secs)
	}
	v.Groups = []Group{g}
	q := d.queue
	q.Messages = append([]QueueMessage(nil), q.Messages...)
	v.Queues = []Queue{q}
	v.Tables = []Table{
		{Name: "orders.outbox", Columns: []string{"id", "order_id", "status", "created"}, Rows: copyRows(d.outbox), Total: d.outboxTotal},
		{Name: "wallet.processed_messages", Columns: []string{"message_id", "processed_at"}, Rows: copyRows(d.processed), Total: 40 + len(d.processed)},
	}
	v.Timeline = append([]TimelineLine(nil), d.tl...)
	v.Checker = Checker{At: d.checkedAt, Fields: []CheckField{
		{Name: "confirmed", Value: d.produced, OK: true},
		{Name: "lost", Value: d.lost, OK: d.lost == 0, Note: lostNote(d.lost)},
		{Name: "unknown", Value: 0, OK: true},
		{Name: "duplicate_deliveries", Value: 0, OK: true},
		{Name: "duplicate_effects", Value: 0, OK: true},
		{Name: "order_violations", Value: 0, OK: true},
		{Name: "dead_lettered", Value: int64(d.queue.DLQDepth), OK: true},
	}}
	v.Charts = Charts{
		Series: []Series{
			{Name: "lag(billing)", Unit: "msgs", Every: time.Second, Values: append([]float64(nil), d.lag...)},
			{Name: "depth(receipts)", Unit: "msgs", Every: time.Second, Values: append([]float64(nil), d.backlog...)},
		},
		Retries: demoRetries(),
	}
	v.Lesson = d.lesson(&v)
	return v
}

func lostNote(n int64) string {
	if n == 0 {
		return ""
	}
	return "acks=1 writes cut by a truncation"
}

func copyRows(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = append([]string(nil), r...)
	}
	return out
}

// demoRetries are 40 clients retrying the same failure with exponential
// backoff (base 1 s, 5 attempts): without jitter they retry together, in
// waves; with full jitter they spread out.
func demoRetries() []RetrySpread {
	rnd := rand.New(rand.NewSource(7))
	var plain, full []time.Duration
	for c := 0; c < 40; c++ {
		var tp, tf time.Duration
		for a := 0; a < 5; a++ {
			b := time.Second << a
			tp += b
			tf += time.Duration(rnd.Int63n(int64(b)))
			plain = append(plain, tp)
			full = append(full, tf)
		}
	}
	return []RetrySpread{{Name: "backoff, no jitter", Times: plain}, {Name: "backoff, full jitter", Times: full}}
}

type demoStep struct {
	title, text string
}

var demoSteps = []demoStep{
	{"Meet the cluster", "Three nodes hold the topic orders: three partitions, each a raft group with a replica on every node. " +
		"Each row of cells is one replica's log: ● is a committed entry, ○ one that is not yet on a majority, and the number is the epoch it was written in.\n\n" +
		"The leader (▲) takes every write; followers copy it a moment later. Watch the ○ turn into ●."},
	{"Kill the leader", "A leader that dies takes its uncommitted entries with it: they were only on its own disk. " +
		"After an election timeout the followers pick a new leader with a higher epoch."},
	{"Bring it back", "The old leader comes back believing in its old epoch. The new leader's log wins: " +
		"the entries the old leader never committed are cut (✂). A producer with acks=1 was told they were written."},
}

func (d *DemoSource) lesson(v *ViewState) *Lesson {
	s := demoSteps[d.step-1]
	ls := &Lesson{ID: "demo-failover", Title: "Demo: leader failover", Step: d.step, Steps: len(demoSteps),
		StepTitle: s.title, Text: s.text}
	p0 := v.Partitions[0]
	switch d.step {
	case 1:
		ls.Expectations = []Expectation{
			{Text: "leader(orders/0) != none", Checked: true, OK: p0.Leader != "", Got: gotIf(p0.Leader == "", "none")},
			{Text: "hwm(orders/0) > 1490", Checked: true, OK: p0.Replicas[0].HWM > 1490},
		}
	case 2:
		killed := d.killSaw
		ls.Tasks = []Task{{Text: "Kill the leader of orders/0", Hint: "select it with ←/→, press k", Done: killed}}
		choices := []string{fmt.Sprint(d.predEpochOr(p0.Epoch)), fmt.Sprint(d.predEpochOr(p0.Epoch) + 1), fmt.Sprint(d.predEpochOr(p0.Epoch) + 2)}
		ls.Prediction = &Prediction{Question: "What epoch will the next leader of orders/0 have?", Choices: choices, Chosen: d.chosen, Answer: -1}
		if d.chosen >= 0 && p0.Leader != "" && p0.Epoch > d.predEpoch {
			ls.Prediction.Answer = int(p0.Epoch - d.predEpoch)
			ls.Prediction.Answer = min(ls.Prediction.Answer, 2)
		}
		ls.Expectations = []Expectation{{Text: "leader(orders/0) != none", Checked: killed, OK: p0.Leader != "", Got: gotIf(p0.Leader == "", "none")}}
	case 3:
		ls.Tasks = []Task{{Text: "Restart the node you killed", Hint: "select it, press r", Done: d.restartSaw}}
		cut := false
		for _, p := range v.Partitions {
			for _, r := range p.Replicas {
				if r.Truncation != nil {
					cut = true
				}
			}
		}
		ls.Expectations = []Expectation{{Text: "a replica truncated its tail (✂)", Checked: d.restartSaw, OK: cut},
			{Text: "lost == 0", Checked: !d.checkedAt.IsZero(), OK: d.lost == 0, Got: gotIf(d.lost != 0, strconv.FormatInt(d.lost, 10))}}
	}
	return ls
}

func (d *DemoSource) predEpochOr(cur uint64) uint64 {
	if d.chosen >= 0 && d.predEpoch > 0 {
		return d.predEpoch
	}
	return cur
}

// gotIf is what a failed expectation shows it found: the demo names a
// value only when the expectation fails.
func gotIf(failed bool, got string) string {
	if failed {
		return got
	}
	return ""
}
