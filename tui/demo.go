package tui

import (
	"fmt"
	"math/rand"
	"strconv"
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
