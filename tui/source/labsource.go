package source

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/tui/view"
)

// LabSource is the Source over a running lab: View maps lab.Snapshot into a
// view.State, Exec runs orders through lab.ExecCommand, and Changes turns the lab's
// event stream (and a slow tick, for what moves with the clock alone) into
// coalesced signals. It does not own the lab: Close stops the signals, the
// caller closes the lab.
//
// A LessonSource wraps a LabSource: its View adds the Lesson, its Exec
// takes the lesson commands (CmdLessonNext, …) and passes the rest on.
type LabSource struct {
	lab *lab.Lab

	sub  *lab.Subscription
	ch   chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once

	mu    sync.Mutex
	trunc truncTimes
}

// labTick is how often Changes signals without an event, so countdowns
// and the clock in the header move while nothing happens.
const labTick = 200 * time.Millisecond

// NewLabSource starts watching l. Close it before closing the lab.
func NewLabSource(l *lab.Lab) *LabSource {
	s := &LabSource{
		lab:   l,
		sub:   l.Subscribe(4096),
		ch:    make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
		trunc: truncTimes{},
	}
	go s.loop()
	return s
}

// Lab returns the lab the source reads.
func (s *LabSource) Lab() *lab.Lab { return s.lab }

func (s *LabSource) loop() {
	defer close(s.done)
	defer close(s.ch)
	tick := time.NewTicker(labTick)
	defer tick.Stop()
	events := s.sub.C
	for {
		select {
		case _, ok := <-events:
			if !ok { // the lab closed: keep ticking until Close
				events = nil
				continue
			}
			s.signal()
		case <-tick.C:
			s.signal()
		case <-s.stop:
			return
		}
	}
}

func (s *LabSource) signal() {
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

// Close stops the signals and returns when the goroutine is gone; Changes
// is closed.
func (s *LabSource) Close() {
	s.once.Do(func() {
		close(s.stop)
		<-s.done
		s.sub.Close()
	})
}

// Changes signals, coalesced, that the lab has moved.
func (s *LabSource) Changes() <-chan struct{} { return s.ch }

// Exec runs an order's lab command on the lab and returns what it said.
func (s *LabSource) Exec(ctx context.Context, o view.Order) (string, error) {
	if o.Cmd == nil {
		return "", o.NotLabCommand()
	}
	res, err := s.lab.ExecCommand(ctx, o.Cmd)
	return strings.Join(res.Lines, "\n"), err
}

// View maps the lab's snapshot now.
func (s *LabSource) View() view.State {
	snap := s.lab.Snapshot()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trunc.learn(snap.Timeline)
	return viewOf(&snap, s.trunc)
}

// timelineSize is how many timeline lines a view.State carries.
const timelineSize = 200

// queueWindow bounds the messages of one queue a view.State carries.
const queueWindow = 20

// truncTimes remembers when each truncation happened, read from the
// timeline while it is there, so a truncation keeps its time after its
// event has scrolled out of the window.
type truncTimes map[string]time.Time

func truncID(group, node string, from, to int64) string {
	return fmt.Sprintf("%s@%s#%d-%d", group, node, from, to)
}

func (tt truncTimes) learn(tl []lab.Event) {
	for _, e := range tl {
		if b := e.Broker; b != nil && string(b.Kind) == "truncation" {
			id := truncID(b.Group, b.Node, b.From, b.To)
			if _, ok := tt[id]; !ok {
				tt[id] = b.Time
			}
		}
	}
}

// ViewOf maps one lab snapshot, as a LabSource does, for a picture of
// the lab at one moment.
func ViewOf(snap *lab.Snapshot) view.State { return viewOf(snap, truncTimes{}) }

// viewOf maps one lab snapshot. The TUI keeps what it returns in its
// history, so nothing in it may share memory with snap (the snapshot is
// already a copy: it may).
func viewOf(snap *lab.Snapshot, trunc truncTimes) view.State {
	v := view.State{
		Time:   snap.Time,
		Clock:  view.Clock{Speed: snap.Speed, Paused: snap.Paused, Behind: snap.Behind},
		Timing: snap.Cluster.Timing,
	}
	v.Nodes = nodesOf(snap)
	v.Partitions = partitionsOf(snap, trunc)
	v.Groups = groupsOf(snap)
	v.Queues = queuesOf(snap)
	v.Tables = tablesOf(snap)
	v.Timeline = timelineOf(snap.Timeline)
	v.Checker = checkerOf(snap)
	v.Jobs = jobsOf(snap)
	v.Charts = chartsOf(snap)
	v.Kafka = kafkaOf(snap)
	v.LogDir = snap.LogDir
	if snap.SQS != nil {
		v.SQS = snap.SQS.Endpoint
	}
	return v
}

func nodesOf(snap *lab.Snapshot) []view.Node {
	isolated := map[string]bool{}
	for _, n := range snap.Cluster.Nodes {
		isolated[n.ID] = n.Isolated
	}
	cut := map[string][]string{}
	for _, l := range snap.Cluster.CutLinks {
		a, b := l[0], l[1]
		// An isolated node's links are its own story: its peers are not
		// "cut from" it in a partition.
		if isolated[a] || isolated[b] {
			continue
		}
		cut[a] = appendOnce(cut[a], b)
		cut[b] = appendOnce(cut[b], a)
	}
	out := make([]view.Node, 0, len(snap.Cluster.Nodes))
	for _, n := range snap.Cluster.Nodes {
		nv := view.Node{ID: n.ID, Up: n.Up, Isolated: n.Isolated, Latency: n.Latency, CutFrom: cut[n.ID]}
		for _, g := range n.Leads {
			if !lab.InternalName(g) {
				nv.Leads = append(nv.Leads, g)
			}
		}
		out = append(out, nv)
	}
	return out
}

func appendOnce(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

func partitionsOf(snap *lab.Snapshot, trunc truncTimes) []view.Partition {
	var out []view.Partition
	for _, t := range snap.Cluster.Topics {
		if lab.InternalName(t.Config.Name) {
			continue
		}
		for _, p := range t.Partitions {
			name := fmt.Sprintf("%s/%d", p.Topic, p.Partition)
			pv := view.Partition{Name: name, Leader: p.Leader, Epoch: p.Epoch, Replicas: make([]view.Replica, 0, len(p.Replicas))}
			for _, r := range p.Replicas {
				rv := view.Replica{Node: r.Node, Role: r.Role, Epoch: r.Epoch,
					LogStart: r.LogStart, HWM: r.HighWatermark, LEO: r.LogEnd}
				rv.Raft = view.RaftView{SinceContact: r.Raft.SinceContact, ElectionIn: r.Raft.ElectionIn}
				for _, x := range r.Raft.Exchanges {
					rv.Raft.Exchanges = append(rv.Raft.Exchanges, view.RaftExchange{Kind: string(x.Kind), Peer: x.Peer, Ago: x.Ago, Term: x.Term,
						Entries: x.Entries, PreVote: x.PreVote, OK: x.OK, Lost: x.Lost})
				}
				if !r.Up {
					rv.Role = "down"
				}
				if len(r.Segments) > 0 {
					rv.SegmentStarts = make([]int64, len(r.Segments))
					for i, s := range r.Segments {
						rv.SegmentStarts[i] = s.BaseOffset
					}
				}
				if len(r.Entries) > 0 {
					rv.Entries = make([]view.Entry, len(r.Entries))
					for i, e := range r.Entries {
						rv.Entries[i] = view.Entry{Offset: e.Offset, Epoch: e.Epoch, Key: e.Key, Value: e.Value, Committed: e.Committed}
					}
				}
				if n := len(r.Truncations); n > 0 {
					tr := r.Truncations[n-1]
					rv.Truncation = &view.Truncation{
						At:     trunc[truncID(name, r.Node, tr.From, tr.To)],
						From:   tr.From,
						To:     tr.To,
						Epochs: append([]uint64(nil), tr.Epochs...),
					}
				}
				pv.Replicas = append(pv.Replicas, rv)
			}
			markLearning(&pv)
			out = append(out, pv)
		}
	}
	return out
}

// groupsOf maps the consumer groups the broker reports.
func groupsOf(snap *lab.Snapshot) []view.Group {
	clientState := map[string]string{}
	for _, c := range snap.Clients {
		clientState[c.Name] = c.State
	}
	var out []view.Group
	for _, g := range snap.Cluster.Groups {
		gv := view.Group{Name: g.Group, Generation: g.Generation, Lag: g.Lag, LagSeconds: g.LagSeconds}
		switch g.State {
		case "preparing-rebalance", "completing-rebalance":
			gv.State = "rebalancing"
		default:
			gv.State = g.State
		}
		for _, m := range g.Members {
			id := m.ClientID
			if id == "" {
				id = m.ID
			}
			mv := view.Member{ID: id, State: "up"}
			switch {
			case m.Joining:
				mv.State = "joining"
			case clientState[id] == "crashed" || clientState[id] == "stopped":
				mv.State = clientState[id]
			}
			for _, tp := range m.Assignment {
				mv.Partitions = append(mv.Partitions, fmt.Sprintf("%s/%d", tp.Topic, tp.Partition))
			}
			if gv.Topic == "" && len(m.Topics) > 0 {
				gv.Topic = m.Topics[0]
			}
			gv.Members = append(gv.Members, mv)
		}
		for _, p := range g.Partitions {
			if gv.Topic == "" {
				gv.Topic = p.Topic
			}
			gv.Offsets = append(gv.Offsets, view.GroupOffset{
				Partition: fmt.Sprintf("%s/%d", p.Topic, p.Partition),
				Committed: p.Committed, HWM: p.HighWatermark, Lag: p.Lag, LagSeconds: p.LagSeconds,
			})
		}
		out = append(out, gv)
	}
	return out
}

// queuesOf maps the work queues the broker reports.
func queuesOf(snap *lab.Snapshot) []view.Queue {
	depth := map[string]int{}
	for _, q := range snap.Cluster.Queues {
		depth[q.Config.Name] = q.Counts.Ready + q.Counts.InFlight + q.Counts.Delayed
	}
	var out []view.Queue
	for _, q := range snap.Cluster.Queues {
		qv := view.Queue{
			Name: q.Config.Name, Leader: q.Leader, Epoch: q.Epoch,
			Ready: q.Counts.Ready, InFlight: q.Counts.InFlight, Delayed: q.Counts.Delayed,
			DLQ: q.Config.DLQ, DLQDepth: depth[q.Config.DLQ],
			MaxReceives: q.Config.MaxReceives, Visibility: q.Config.Visibility,
			MaxLength: q.Config.MaxLength, TTL: q.Config.TTL,
		}
		for _, m := range q.Messages {
			if len(qv.Messages) == queueWindow {
				break
			}
			mv := view.QueueMessage{ID: m.MsgID, Value: m.Body, State: m.State, Worker: m.Consumer, Receives: m.ReceiveCount}
			if !m.Deadline.IsZero() {
				mv.Due = max(0, m.Deadline.Sub(snap.Time))
			}
			qv.Messages = append(qv.Messages, mv)
		}
		out = append(out, qv)
	}
	return out
}

func timelineOf(tl []lab.Event) []view.TimelineLine {
	from := max(0, len(tl)-timelineSize)
	out := make([]view.TimelineLine, 0, len(tl)-from)
	for _, e := range tl[from:] {
		if e.Detail {
			continue
		}
		kind := string(e.Kind)
		if e.Broker != nil {
			kind = string(e.Broker.Kind)
		}
		out = append(out, view.TimelineLine{Time: e.Time, Kind: kind, Text: e.Text})
	}
	return out
}

func checkerOf(snap *lab.Snapshot) view.Checker {
	r := snap.Report
	if r == nil {
		return view.Checker{}
	}
	c := view.Checker{At: snap.Checked}
	for _, name := range checker.Fields() {
		n, _ := r.Field(name)
		f := view.CheckField{Name: name, Value: int64(n), OK: !checker.Anomaly(name) || n == 0}
		switch {
		case name == "unchecked" && len(r.Unreadable) > 0:
			f.Note = "could not read " + strings.Join(r.Unreadable, ", ")
		case name == "fetched" && len(r.Ambiguous) > 0:
			f.Note = "some the broker could not tie to one group: see below"
		}
		if fs, n := r.Explain(name); n > 0 && len(fs) > 0 {
			for _, w := range fs {
				f.Why = append(f.Why, w.String())
			}
			if name != "fetched" { // its lines are per partition, not per record
				f.More = max(n-checker.Listed(fs), 0)
			}
		}
		c.Fields = append(c.Fields, f)
	}
	return c
}

func jobsOf(snap *lab.Snapshot) []view.Job {
	var out []view.Job
	for _, ld := range snap.Loads {
		if ld.State == lab.LoadStopped {
			continue
		}
		name := "load " + ld.Topic
		if ld.Client != "load" {
			name += " as " + ld.Client
		}
		if ld.State == lab.LoadWaiting {
			name += " (waiting)"
		}
		out = append(out, view.Job{Name: name, Done: int64(ld.Sent), Total: int64(ld.Total)})
	}
	if snap.Drain != nil {
		out = append(out, drainJob(snap.Drain))
	}
	return out
}

// markLearning finds the entries a replica holds uncommitted that are in
// fact committed: the replica with the highest high-water mark holds the
// same entry (offset and epoch) below that mark. A follower back from a
// restart learns the leader's high-water mark only with the next
// heartbeat; until then its committed entries are not "not yet on a
// majority". An entry of another epoch at such an offset is a divergent
// tail and stays uncommitted.
func markLearning(p *view.Partition) {
	best := -1
	for i, r := range p.Replicas {
		if r.Role != "down" && (best < 0 || r.HWM > p.Replicas[best].HWM) {
			best = i
		}
	}
	if best < 0 {
		return
	}
	ref := p.Replicas[best]
	epochAt := make(map[int64]uint64, len(ref.Entries))
	for _, e := range ref.Entries {
		if e.Committed {
			epochAt[e.Offset] = e.Epoch
		}
	}
	for i := range p.Replicas {
		es := p.Replicas[i].Entries
		for j := range es {
			if ep, ok := epochAt[es[j].Offset]; ok && !es[j].Committed && ep == es[j].Epoch {
				es[j].Learning = true
			}
		}
	}
}

// kafkaOf is the Kafka listener: its bootstrap list and the clients connected.
func kafkaOf(snap *lab.Snapshot) *view.Kafka {
	if snap.Kafka == nil {
		return nil
	}
	k := &view.Kafka{Bootstrap: snap.Kafka.Bootstrap}
	for _, c := range snap.Kafka.Clients {
		k.Clients = append(k.Clients, view.KafkaClient{ID: c.ID, Software: c.Software})
	}
	return k
}
