package lab

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/sqswire"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/checkout"
	"github.com/mqlab/mqlab/lab/clients"
	"github.com/mqlab/mqlab/lab/clock"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/kafka"
	"github.com/mqlab/mqlab/lab/loads"
	"github.com/mqlab/mqlab/lab/series"
	"github.com/mqlab/mqlab/lab/serviceset"
	"github.com/mqlab/mqlab/lab/timeline"
)

// world is everything one cluster command creates: the cluster, the
// clients, the generators and the history of what they did. The cluster
// command replaces it whole.
type world struct {
	cluster *broker.Cluster
	timing  broker.Timing
	ctx     context.Context // ends when the world is retired
	cancel  context.CancelFunc
	sub     *broker.Subscription
	pumped  chan struct{}    // closed when the event pump has stopped
	loads   *loads.Set       // the load generators (package lab/loads)
	svc     *serviceset.Set  // the running services (package lab/serviceset)
	groups  *groupSet        // the consumer clients (feature_groups.go)
	queues  *queueSet        // the queue senders and workers (feature_queues.go)
	series  *series.Set      // lag and depth over time (package lab/series)
	retries clients.Retries  // the retries consumers and workers schedule (package lab/clients)
	buyers  *checkout.Buyers // the buyers runs through the checkout (package lab/checkout)
	kafka   *kafka.Listener  // the Kafka protocol on the nodes (package lab/kafka)
	sqs     *sqswire.Server  // under mu; nil unless listening (feature_sqs.go)
	sqsWire sqsHistory       // what its SQS clients did

	mu      sync.Mutex
	clients map[string]*client
	history []*Produce
	report  *checker.Report // the last check
	drain   *DrainState     // the running check's progress (check.go)
	checked time.Time

	// Guarded by the lab's timeline lock.
	brokerSeq uint64
	retired   bool
	pending   []*Event // commands acting now, shown before the next broker event (see run.act)

	// produced is each client's last produce command (produce.go).
	produced produceStats
}

// checkerClient is the client id the checker reads logs as; client names
// cannot start with '_', so no learner's fault can be armed for it.
const checkerClient = "_checker"

// defaultProducer is the client that produce uses unless as= names another.
const defaultProducer = "producer"

func (l *Lab) newWorld(nodes int, timing broker.Timing) (*world, error) {
	pace := 0.0 // a new world starts at 1x (see the cluster command), so raft at its preset
	if l.hurry.Load() {
		pace = timing.Hurried()
	}
	l.mu.Lock()
	if old := l.w; old != nil {
		// The new cluster takes the log folder over from the old one.
		old.cluster.Files().Release()
	}
	l.mu.Unlock()
	c, err := broker.NewCluster(broker.Config{Nodes: nodes, Timing: timing, Now: l.clock.Now, OffsetsPartitions: offsetsPartitions, RaftPace: pace, DataDir: l.logDir})
	if err != nil {
		return nil, err
	}
	w := &world{cluster: c, timing: timing, pumped: make(chan struct{}), clients: map[string]*client{}}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.clients[defaultProducer] = newClient(defaultProducer)
	w.svc = serviceset.New(host{l, w}, serviceHost{l, w})
	w.groups = newGroupSet(l, w)
	w.queues = newQueueSet(l, w)
	w.series = series.Start(host{l, w})
	w.buyers = checkout.New(host{l, w}, w.checkout)
	w.kafka = kafka.New(host{l, w})
	w.loads = loads.New(host{l, w})
	w.sub = c.Subscribe(8192)
	go func() {
		defer close(w.pumped)
		for e := range w.sub.C {
			l.addBroker(w, e)
		}
	}()
	return w, nil
}

// close stops the world's generators, services and cluster and waits for
// them.
func (w *world) close() {
	w.kafka.Close() // outside clients first: they reach the cluster through it
	w.closeSQS()
	w.cancel()
	w.loads.Close()
	w.series.Wait()
	w.buyers.Close() // before the services they call
	w.groups.close() // before the services: consumers call them
	w.queues.close() // and workers too
	w.svc.Close()
	w.cluster.Close()
	<-w.pumped
}

// host is a world as a family package sees it (package lab/family).
type host struct {
	l *Lab
	w *world
}

func (h host) Cluster() *broker.Cluster   { return h.w.cluster }
func (h host) Clock() *clock.Clock        { return h.l.clock }
func (h host) Context() context.Context   { return h.w.ctx }
func (h host) Add(e timeline.Event)       { h.l.addFor(h.w, e) }
func (h host) AddAlways(e timeline.Event) { h.l.tl.Add(e) }

// bind returns a context that also ends when the world is retired.
func (w *world) bind(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(w.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// addFor puts an event of world w in the timeline, unless w has been
// retired: a client or service of an old cluster says nothing more.
func (l *Lab) addFor(w *world, e Event) {
	l.tl.Lock()
	defer l.tl.Unlock()
	if !w.retired {
		l.tl.AddLocked(e)
	}
}

// addBroker puts one broker event in the timeline, once, in broker order.
func (l *Lab) addBroker(w *world, e broker.Event) {
	l.tl.Lock()
	defer l.tl.Unlock()
	if w.retired || e.Seq <= w.brokerSeq {
		return
	}
	w.brokerSeq = e.Seq
	for _, c := range w.pending {
		l.tl.AddLocked(*c)
	}
	w.pending = w.pending[:0]
	w.queues.note(e)
	detail := timeline.DetailKind(e.Kind) || w.buyers.Routine(e) || w.loads.FromLoad(e.MsgID)
	l.tl.AddLocked(Event{Time: e.Time, Kind: EventBroker, Text: e.Text, Detail: detail, Broker: &e})
}

// syncBroker pulls the broker's retained events the pump has not delivered
// yet, so that a command's events are in the timeline when it returns.
func (l *Lab) syncBroker(w *world) {
	l.tl.Lock()
	since := w.brokerSeq
	l.tl.Unlock()
	for _, e := range w.cluster.Events(since) {
		l.addBroker(w, e)
	}
}

// topic returns a topic's state, or an error that names the topics there are.
func (w *world) topic(name string) (broker.TopicState, error) {
	snap := w.cluster.SnapshotWindow(0)
	var names []string
	for _, t := range snap.Topics {
		if t.Config.Name == name {
			return t, nil
		}
		names = append(names, t.Config.Name)
	}
	if len(names) == 0 {
		return broker.TopicState{}, fmt.Errorf("%w %q: there are no topics yet; create one with topic create %s partitions=1", broker.ErrUnknownTopic, name, name)
	}
	return broker.TopicState{}, fmt.Errorf("%w %q; the topics are %s%s", broker.ErrUnknownTopic, name, strings.Join(names, ", "), didYouMean(name, names))
}

// partition returns one partition's state.
func (w *world) partition(name string, p int) (broker.PartitionState, error) {
	t, err := w.topic(name)
	if err != nil {
		return broker.PartitionState{}, err
	}
	if p < 0 || p >= len(t.Partitions) {
		return broker.PartitionState{}, fmt.Errorf("%w: %s has %s, not %d", broker.ErrUnknownPartition, name, command.PartitionsText(len(t.Partitions)), p)
	}
	return t.Partitions[p], nil
}

// node checks a node id against the cluster.
func (w *world) node(id string) (broker.NodeState, error) {
	snap := w.cluster.SnapshotWindow(0)
	var ids []string
	for _, n := range snap.Nodes {
		if n.ID == id {
			return n, nil
		}
		ids = append(ids, n.ID)
	}
	return broker.NodeState{}, fmt.Errorf("%w %q; the nodes are %s", broker.ErrUnknownNode, id, strings.Join(ids, ", "))
}

// clientNames lists the clients, producers, generators and consumers
// alike, sorted.
func (w *world) clientNames() []string {
	w.mu.Lock()
	var out []string
	for n := range w.clients {
		out = append(out, n)
	}
	w.mu.Unlock()
	out = append(out, w.groups.names()...)
	out = append(out, w.queues.names()...)
	out = append(out, w.kafka.Clients()...)
	out = append(out, w.sqsWire.clientNames()...)
	sort.Strings(out)
	return slices.Compact(out)
}

func (w *world) hasClient(name string) bool {
	w.mu.Lock()
	known := w.clients[name] != nil
	w.mu.Unlock()
	return known || w.groups.has(name) || w.queues.has(name) || slices.Contains(w.kafka.Clients(), name) ||
		slices.Contains(w.sqsWire.clientNames(), name)
}

// byNodeOrder sorts node ids n1, n2, …, n10.
func byNodeOrder(ids []string) {
	sort.Slice(ids, func(i, j int) bool {
		if len(ids[i]) != len(ids[j]) {
			return len(ids[i]) < len(ids[j])
		}
		return ids[i] < ids[j]
	})
}

// didYouMean suggests the nearest of candidates, the same way the
// parser suggests commands.
func didYouMean(word string, candidates []string) string {
	return command.DidYouMean(word, candidates)
}

// offsetsPartitions is how many partitions __consumer_offsets has: one
// raft group is enough for a lab's few groups.
const offsetsPartitions = 1

// InternalTopics are the topics every lab cluster starts with, by name,
// with their partition counts: the committed offsets' __consumer_offsets.
func InternalTopics() map[string]int {
	return map[string]int{broker.OffsetsTopic: offsetsPartitions}
}
