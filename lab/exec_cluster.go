package lab

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/timeline"
)

// The commands that shape the cluster and its network.

func (r *run) cluster(c command.Cluster) error {
	name := c.Timing
	if name == "" {
		name = r.l.opts.Timing
	}
	timing, err := broker.TimingByName(name)
	if err != nil {
		return err
	}
	r.begin(c.String())
	r.l.swap.Lock()
	defer r.l.swap.Unlock()
	nw, err := r.l.newWorld(c.Nodes, timing)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	r.l.mu.Lock()
	if r.l.closed {
		r.l.mu.Unlock()
		r.l.retire(nw)
		return ErrClosed
	}
	old := r.l.w
	r.l.w = nw
	r.l.mu.Unlock()
	r.l.retire(old)
	r.w = nw
	r.l.syncBroker(nw)
	// A fresh world starts at normal speed: a speed-up or a pause left from
	// the last scene would silently change the next one's numbers.
	clock := ""
	if factor, paused := r.l.clock.Speed(); factor != 1 || paused {
		r.l.clock.SetSpeed(1)
		r.l.clock.Resume()
		clock = "; lab time runs at 1x again"
	}
	r.say(EventOutcome, "a new cluster: %s, timing %s; the old cluster, its clients and its history are gone%s",
		strings.Join(nw.cluster.Nodes(), ", "), timing.Name, clock)
	nw.kafka.Follow(r, old.kafka)
	r.relistenSQS()
	return nil
}

// adminTimeout bounds commands that wait for elections.
func (w *world) adminTimeout() time.Duration {
	return max(20*time.Second, 100*w.timing.ElectionTimeout)
}

func (r *run) topicCreate(ctx context.Context, c command.TopicCreate) error {
	if _, err := r.w.topic(c.Topic); err == nil {
		return fmt.Errorf("topic create: %w: %q", broker.ErrTopicExists, c.Topic)
	}
	nodes := len(r.w.cluster.Nodes())
	if c.RF > nodes {
		return fmt.Errorf("topic create %s: rf=%d but the cluster has %d nodes", c.Topic, c.RF, nodes)
	}
	cfg := broker.TopicConfig{Name: c.Topic, Partitions: c.Partitions, RF: c.RF,
		SegmentRecords: c.Segment.Count, SegmentBytes: c.Segment.Bytes, SegmentAge: c.Segment.Age, RetentionAge: c.Retention.Age, RetentionBytes: c.Retention.Bytes,
		DeleteRetention: c.DeleteRetention, ManualCleaner: c.Cleaner == "manual"}
	if c.Cleanup != "" {
		cleanup, err := broker.NormalizeCleanup(c.Cleanup)
		if err != nil {
			return fmt.Errorf("topic create %s: %w", c.Topic, err)
		}
		cfg.Cleanup = cleanup
	}
	r.begin(c.String())
	ctx, cancel := r.w.bind(ctx)
	defer cancel()
	ctx, cancel2 := context.WithTimeout(ctx, r.w.adminTimeout())
	defer cancel2()
	if err := r.w.cluster.CreateTopic(ctx, cfg); err != nil {
		return err
	}
	t, err := r.w.topic(c.Topic)
	if err != nil {
		return err
	}
	var leaders []string
	for _, p := range t.Partitions {
		leaders = append(leaders, fmt.Sprintf("%s/%d on %s", c.Topic, p.Partition, orNone(p.Leader)))
	}
	kind := ""
	if cfg.Compacted() {
		kind = "; compacted (" + cfg.Cleanup + ")"
	}
	r.say(EventOutcome, "topic %s: %d partition(s), rf %d; leaders %s%s", c.Topic, len(t.Partitions), t.Config.RF, strings.Join(leaders, ", "), kind)
	return nil
}

// compact runs one compaction pass on a partition now; the broker
// reports the pass on the timeline.
func (r *run) compact(ctx context.Context, c command.Compact) error {
	tp := broker.TopicPartition{Topic: c.Partition.Name, Partition: c.Partition.Partition}
	r.begin(c.String())
	ctx, cancel := r.w.bind(ctx)
	defer cancel()
	ctx, cancel2 := context.WithTimeout(ctx, r.w.adminTimeout())
	defer cancel2()
	_, cleaned, err := r.w.cluster.Compact(ctx, tp)
	if err != nil {
		return err
	}
	if !cleaned {
		r.say(EventOutcome, "compact %s: no closed segment yet; the active segment is never cleaned", tp)
		return nil
	}
	return nil // the broker's own event reports the pass on the timeline
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func (r *run) elect(ctx context.Context, c command.Elect) error {
	if !c.Target.IsPartition {
		if _, err := r.w.topic(c.Target.Name); err != nil {
			return r.electQueue(ctx, c)
		}
		return r.w.queueNotAvailable(c.Target.Name, c.String())
	}
	p, err := r.w.partition(c.Target.Name, c.Target.Partition)
	if err != nil {
		return fmt.Errorf("elect: %w", err)
	}
	id, err := r.w.resolve(c.Node)
	if err != nil {
		return fmt.Errorf("elect: %w", err)
	}
	tp := broker.TopicPartition{Topic: c.Target.Name, Partition: c.Target.Partition}
	var hosts, down []string
	for _, rep := range p.Replicas {
		hosts = append(hosts, rep.Node)
		if !rep.Up {
			down = append(down, rep.Node)
		}
	}
	if err := electable(id, tp.String(), hosts, down); err != nil {
		return err
	}
	what := fmt.Sprintf("elect %s %s", resolved(c.Node, id), tp)
	if c.Epoch != 0 {
		what += fmt.Sprintf(" epoch=%d", c.Epoch)
	}
	r.begin(what)
	ctx, cancel := r.w.bind(ctx)
	defer cancel()
	if c.Epoch != 0 {
		if err := r.electRound(ctx, tp, id, down, hosts, uint64(c.Epoch)); err != nil {
			return err
		}
	} else {
		ctx, cancel2 := context.WithTimeout(ctx, r.w.adminTimeout())
		defer cancel2()
		if err := r.w.cluster.TransferLeadership(ctx, tp, id); err != nil {
			return err
		}
	}
	p, _ = r.w.partition(tp.Topic, tp.Partition)
	r.say(EventOutcome, "%s leads %s at epoch %d", orNone(p.Leader), tp, p.Epoch)
	return nil
}

// electRound moves tp's leadership from replica to replica, one election
// each, until id leads at epoch want: the way a lesson reaches the epoch
// its story tells. An election that skips a number can overshoot, and an
// epoch already past want cannot come back: both are errors.
func (r *run) electRound(ctx context.Context, tp broker.TopicPartition, id string, down, hosts []string, want uint64) error {
	for range 2 * want {
		p, err := r.w.partition(tp.Topic, tp.Partition)
		if err != nil {
			return fmt.Errorf("elect: %w", err)
		}
		switch {
		case p.Epoch == want && p.Leader == id:
			return nil
		case p.Epoch >= want:
			return fmt.Errorf("elect %s %s epoch=%d: %s is at epoch %d already, and epochs only grow", id, tp, want, tp, p.Epoch)
		}
		// One election short of want, the next leader is id; before that,
		// any replica but id and the current leader, so that id does not
		// lead one election too early.
		if want-p.Epoch == 1 && p.Leader == id {
			return fmt.Errorf("elect %s %s epoch=%d: %s leads at epoch %d, and the next election would make another node leader at %d; ask for epoch=%d", id, tp, want, id, p.Epoch, want, want+1)
		}
		next := id
		if want-p.Epoch > 1 {
			next = ""
			for _, h := range hosts {
				if h != id && h != p.Leader && !slices.Contains(down, h) {
					next = h
					break
				}
			}
			if next == "" {
				return fmt.Errorf("elect %s %s epoch=%d: moving leadership round needs a third replica up besides %s and the leader", id, tp, want, id)
			}
		}
		step, cancel := context.WithTimeout(ctx, r.w.adminTimeout())
		err = r.w.cluster.TransferLeadership(step, tp, next)
		cancel()
		if err != nil {
			return err
		}
	}
	return fmt.Errorf("elect %s %s epoch=%d: the epoch did not get there", id, tp, want)
}

// kill and restart leave the node's state to the broker, which checks it
// (down already, up already) under its own lock and says so in the words
// the learner sees.
func (r *run) kill(c command.Kill) error {
	id, err := r.w.resolve(c.Node)
	if err != nil {
		return fmt.Errorf("kill: %w", err)
	}
	return r.act("kill "+resolved(c.Node, id), func() error { return r.w.cluster.Kill(id) })
}

func (r *run) crash(c command.Crash) error {
	id, err := r.w.resolve(c.Node)
	if err != nil {
		return fmt.Errorf("crash: %w", err)
	}
	var torn []string
	err = r.act("crash "+resolved(c.Node, id)+" torn", func() (err error) {
		torn, err = r.w.cluster.Files().CrashTorn(id)
		return err
	})
	if err == nil && len(torn) == 0 {
		r.say(EventNote, "%s had written no batch to tear: it died like a kill", id)
	}
	return err
}

func (r *run) restart(c command.Restart) error {
	id, err := r.w.resolve(c.Node)
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	return r.act("restart "+resolved(c.Node, id), func() error { return r.w.cluster.Restart(id) })
}

func (r *run) isolate(c command.Isolate) error {
	id, err := r.w.resolve(c.Node)
	if err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	r.begin("isolate " + resolved(c.Node, id))
	return r.w.cluster.Isolate(id)
}

func (r *run) partition(c command.Partition) error {
	sides := make([][]string, len(c.Sides))
	texts := make([]string, len(c.Sides))
	seen := map[string]string{}
	for i, side := range c.Sides {
		var words []string
		for _, ref := range side {
			id, err := r.w.resolve(ref)
			if err != nil {
				return fmt.Errorf("partition: %w", err)
			}
			if prev, ok := seen[id]; ok {
				return fmt.Errorf("partition: %s and %s are both %s; a node can be on one side only", prev, ref, id)
			}
			seen[id] = ref.String()
			sides[i] = append(sides[i], id)
			words = append(words, resolved(ref, id))
		}
		texts[i] = strings.Join(words, ",")
	}
	r.begin("partition " + strings.Join(texts, " | "))
	return r.w.cluster.Partition(sides...)
}

func (r *run) slow(c command.Slow) error {
	id, err := r.w.resolve(c.Node)
	if err != nil {
		return fmt.Errorf("slow: %w", err)
	}
	r.begin(strings.Replace(c.String(), c.Node.String(), resolved(c.Node, id), 1))
	return r.w.cluster.Slow(id, c.Latency)
}

func (r *run) heal() error {
	r.begin("heal")
	r.w.cluster.Heal()
	return nil
}

// drop arms a lost reply or ack for a client that exists; a name the lab
// does not know is a typo, not a client that will appear later.
func (r *run) drop(client, kind, text string) error {
	if !r.w.hasClient(client) {
		names := r.w.clientNames()
		return fmt.Errorf("drop next %s: no client named %q; the clients are %s (as=NAME makes one)%s",
			kind, client, strings.Join(names, ", "), didYouMean(client, names))
	}
	r.begin(text)
	if kind == "reply" {
		return r.w.cluster.DropNextReply(client)
	}
	return r.w.cluster.DropNextAck(client)
}

func (r *run) clockCommand(ctx context.Context, cmd command.Command) error {
	r.begin(cmd.String())
	switch c := cmd.(type) {
	case command.Speed:
		r.l.clock.SetSpeed(c.Factor)
		if err := r.l.pace(r.w); err != nil {
			return fmt.Errorf("speed: lab time changed, but raft's pace did not: %w", err)
		}
		if pace := raftPace(c.Factor); pace > 1 {
			r.say(EventClock, "lab time now runs at %sx the wall clock, and raft with it: its heartbeat and election timeouts are %sx the %s preset's, so an election takes as long in lab time as the preset says",
				trimFloat(c.Factor), trimFloat(pace), r.w.timing.Name)
		} else {
			r.say(EventClock, "lab time now runs at %sx the wall clock; raft keeps the %s preset's timeouts", trimFloat(c.Factor), r.w.timing.Name)
		}
	case command.Pause:
		if c.In > 0 {
			return r.pauseIn(ctx, c.In)
		}
		r.l.clock.Pause()
		r.say(EventClock, "lab time paused: generators wait; raft's own timers do not")
	case command.Resume:
		r.l.clock.Resume()
		factor, _ := r.l.clock.Speed()
		r.say(EventClock, "lab time runs again at %sx", trimFloat(factor))
	}
	return nil
}

func trimFloat(f float64) string { return timeline.Number(f) }

func (r *run) help(c command.Help) error {
	if c.Topic == "" {
		r.lines = append(r.lines, strings.Split(command.HelpText(nil), "\n")...)
		return nil
	}
	s, _ := command.Lookup(c.Topic)
	r.lines = append(r.lines, strings.Split(s.Detail(), "\n")...)
	return nil
}

// electable checks, before anything is done, that node id can be elected
// for a raft group whose replicas are on hosts: it must hold one, and it
// must be up.
func electable(id, group string, hosts, down []string) error {
	if !slices.Contains(hosts, id) {
		return fmt.Errorf("elect %s %s: %s holds no replica of it; its replicas are on %s", id, group, id, strings.Join(hosts, ", "))
	}
	if slices.Contains(down, id) {
		return fmt.Errorf("elect %s %s: %w; restart it first", id, group, broker.ErrNodeDown)
	}
	return nil
}

// pauseIn lets d of lab time pass and stops the clock exactly there, so
// that what is read next (a backlog, a lag) is the state at that moment
// however late the machine gets round to reading it.
func (r *run) pauseIn(ctx context.Context, d time.Duration) error {
	if _, paused := r.l.clock.Speed(); paused {
		return fmt.Errorf("pause in=%v: lab time is paused already, so %v of it would never pass; resume first, then pause in=%v", d, d, d)
	}
	ctx, cancel := r.w.bind(ctx)
	defer cancel()
	at := r.l.clock.Now().Add(d)
	r.l.clock.PauseAt(at)
	start, given := time.Now(), r.l.clock.Given()
	if err := r.l.clock.SleepUntil(ctx, at); err != nil {
		// The stop is not left armed. Taking it away tells whether it
		// was reached meanwhile: then the clock has stopped there, and
		// the pause is done after all.
		left := max(at.Sub(r.l.clock.Now()), 0)
		r.l.clock.PauseAt(time.Time{})
		if _, paused := r.l.clock.Speed(); !paused {
			// Say how far lab time got, and how much of the wall time it
			// waited for the lab's own work (a generator or a client
			// behind its rate on a busy machine holds it).
			return fmt.Errorf("pause in=%v: %w, with %v of lab time still to pass after %v of wall time, %v of lab time given up meanwhile for the lab's work",
				d, err, left.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), (r.l.clock.Given() - given).Round(time.Millisecond))
		}
	}
	r.l.clock.Pause()
	r.say(EventClock, "lab time paused after %v more: generators wait; raft's own timers do not", d)
	return nil
}

// raftPace is how much a lab speed below real time stretches raft's
// timeouts: at 0.25x four times, so that an election lasts as long in lab
// time as the timing preset says and a class sees it slowly. Faster than
// real time raft keeps its preset (making it faster would starve it), up
// to the broker's bound when slowed a great deal.
func raftPace(speed float64) float64 {
	if speed <= 0 || speed >= 1 {
		return 1
	}
	return min(1/speed, broker.MaxRaftPace)
}

// Hurry, while on, runs raft on the fast preset's heartbeat and election
// timeouts whatever the lab's timing and speed, on this cluster and on
// any the cluster command starts meanwhile: for work nobody watches, such
// as a lesson re-running its earlier steps on a fresh cluster, where a
// classroom election would keep the learner waiting for a scene already
// seen. Off gives raft the pace the lab's timing and speed ask for.
// Consumers started while hurried join with the fast preset's session
// (groupSet.sessionFor); clients' request timeouts keep the lab's timing.
func (l *Lab) Hurry(on bool) error {
	l.hurry.Store(on)
	w, err := l.world()
	if err != nil {
		return err
	}
	if err := l.pace(w); err != nil {
		return fmt.Errorf("hurry: %w", err)
	}
	return nil
}

// pace sets raft's pace on w's cluster from the lab's speed and Hurry.
func (l *Lab) pace(w *world) error {
	if l.hurry.Load() {
		return w.cluster.SetRaftPace(w.cluster.Timing().Hurried())
	}
	factor, _ := l.clock.Speed()
	return w.cluster.SetRaftPace(raftPace(factor))
}

// resolve turns a node reference into a node id, reading the cluster as it
// is now: leader(orders/0) is whoever leads at the highest epoch, and
// follower(orders/0) the first live replica in node order that does not.
func (w *world) resolve(ref command.NodeRef) (string, error) {
	if ref.Kind == command.RefNode {
		if _, err := w.node(ref.Node); err != nil {
			return "", err
		}
		return ref.Node, nil
	}
	if isController(ref.Of) {
		ctl := w.cluster.SnapshotWindow(0)
		var nodes []broker.ReplicaState
		for _, n := range ctl.Nodes {
			nodes = append(nodes, broker.ReplicaState{Node: n.ID, Up: n.Up})
		}
		return leaderOrFollower(ref, ctl.Controller.Leader, nodes, func(r broker.ReplicaState) (string, bool) { return r.Node, r.Up })
	}
	if !ref.Of.IsPartition {
		if _, err := w.topic(ref.Of.Name); err != nil {
			return w.resolveQueue(ref)
		}
		return "", w.queueNotAvailable(ref.Of.Name, ref.String())
	}
	p, err := w.partition(ref.Of.Name, ref.Of.Partition)
	if err != nil {
		return "", fmt.Errorf("%s: %w", ref, err)
	}
	return leaderOrFollower(ref, p.Leader, p.Replicas, func(r broker.ReplicaState) (string, bool) { return r.Node, r.Up })
}

// isController says whether t names the controller, a name the broker
// keeps from topics and queues.
func isController(t command.Target) bool {
	return !t.IsPartition && t.Name == "controller"
}

// leaderOrFollower resolves leader(X) or follower(X) of a partition or a
// queue, by its leader and its replicas; node says which node a replica
// is on and whether it is up.
func leaderOrFollower[R any](ref command.NodeRef, leader string, replicas []R, node func(R) (id string, up bool)) (string, error) {
	if ref.Kind == command.RefLeader {
		if leader == "" {
			return "", fmt.Errorf("%s: %s has no leader right now (an election, or too few replicas up); wait leader(%s) != none first", ref, ref.Of, ref.Of)
		}
		return leader, nil
	}
	var followers []string
	for _, r := range replicas {
		if n, up := node(r); up && n != leader {
			followers = append(followers, n)
		}
	}
	if len(followers) == 0 {
		return "", fmt.Errorf("%s: %s has no live follower right now", ref, ref.Of)
	}
	byNodeOrder(followers)
	return followers[0], nil
}

// resolved writes a reference with what it resolved to: "leader(orders/0) → n1".
func resolved(ref command.NodeRef, id string) string {
	if ref.Kind == command.RefNode {
		return id
	}
	return ref.String() + " → " + id
}

// queueNotAvailable explains why a name that is not a partition cannot be
// used where only partitions are: a topic name without /N gets a hint, an
// unknown name the queues there are.
func (w *world) queueNotAvailable(name, what string) error {
	if t, err := w.topic(name); err == nil {
		return fmt.Errorf("%s: %s is a topic; name one of its %d partitions, e.g. %s/0", what, name, len(t.Partitions), name)
	}
	if _, err := w.queueState(name); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %w for a queue", what, ErrNotAvailable)
}

// stateOfNode reads a node's state: up or down.
func stateOfNode(n broker.NodeState) string {
	if n.Up {
		return "up"
	}
	return "down"
}
