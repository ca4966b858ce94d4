package broker

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The torture test: random fault schedules, one per seed, against idempotent
// acks=all producers, a consumer group and queue workers on a 3-node
// cluster, then a heal, a drain and a check of what the clients were told
// against what the replicas hold. A failing seed prints its schedule as an
// mqlab script and the command that replays it.
//
//	go test ./broker -run 'TestTorture$' -torture.seeds=20 -torture.messages=1000
//	go test ./broker -run 'TestTorture$' -torture.seed=17
//	go test ./broker -run 'TestTorture$' -torture.long -torture.parallel=6 -timeout=0
//
// A seed spends most of its time waiting on raft's timers and the clients'
// pacing, not on the CPU, so -torture.parallel runs several seeds at once,
// each on a cluster of its own: three by default, which takes the ten
// seeds of go test from about 38 s to about 16 s on two cores.
var (
	tortureSeeds    = flag.Int("torture.seeds", defaultTortureSeeds, "torture: how many seeds to run (seeds 1…N)")
	tortureSeed     = flag.Uint64("torture.seed", 0, "torture: replay this one seed")
	tortureMessages = flag.Int("torture.messages", 300, "torture: messages produced per seed")
	tortureLiveness = flag.Bool("torture.liveness", true, "torture: after the heal, every producer must still write to every partition")
	tortureLong     = flag.Bool("torture.long", false, "torture: long mode, 200 seeds × 5,000 messages unless -torture.seeds / -torture.messages say otherwise")
	tortureParallel = flag.Int("torture.parallel", 3, "torture: how many seeds run at once, each on its own cluster")
)

const (
	tortureTopic = "orders"
	tortureQueue = "jobs"
	tortureDLQ   = "jobs-dlq"
	tortureGroup = "billing"
)

// The anomalies the check names.
const (
	anomalyLost       = "lost"              // an acknowledged message is not in the log / not accounted for by its queue
	anomalyDuplicate  = "duplicate"         // a message is in the log more than once
	anomalyOrder      = "order"             // a key's messages are out of the order they were sent in
	anomalyPhantom    = "phantom"           // a message reported failed is in the log
	anomalyDiverged   = "replicas-differ"   // replicas' committed logs differ
	anomalyRegression = "offset-regression" // a committed offset moved backwards
	anomalyReprocess  = "reprocessed"       // a record delivered again after its offset was committed
	anomalyStuck      = "stuck"             // after the heal a producer can no longer write to a partition
)

type anomaly struct{ kind, detail string }

// tortureStats are what a run counted, summed over seeds at the end.
type tortureStats struct {
	faults, acked, unknown, unknownCommitted, failed, queueAcked, queueUnknown, rejected int
}

func (a *tortureStats) add(b tortureStats) {
	a.faults += b.faults
	a.acked += b.acked
	a.unknown += b.unknown
	a.unknownCommitted += b.unknownCommitted
	a.failed += b.failed
	a.queueAcked += b.queueAcked
	a.queueUnknown += b.queueUnknown
	a.rejected += b.rejected
}

// tortureConfig is one run. The zero value of the mutation knobs is the
// real test.
type tortureConfig struct {
	seed     uint64
	messages int
	acks     Acks
	idem     bool
	// faults replaces the random schedule (mutation tests force theirs).
	faults func(h *torture)
	// skipCommit makes consumer c1 report a batch as committed without
	// committing it, then crash: the bug the reprocessed check must catch.
	skipCommit bool
}

// torture holds one run's cluster, its clients' ledger and the schedule.
type torture struct {
	t   testing.TB
	c   *Cluster
	cfg tortureConfig

	mu        sync.Mutex
	produced  map[string]Outcome // producer msg id → what the producer was told
	sent      map[string]Outcome // queue msg id → what the sender was told
	rejected  int
	ackTried  map[string]bool            // queue msg ids a worker tried to ack
	confirmed map[TopicPartition]int64   // highest offset a consumer's successful commit covered
	maxSeen   map[TopicPartition]int64   // highest committed offset DescribeGroup showed
	delivered map[TopicPartition][]int64 // offsets handed to the consumers, repeats included
	anomalies []anomaly
	script    []string
	stats     tortureStats
	why       map[string]int // produce outcomes other than acked, by reason
	start     time.Time
}

func (h *torture) report(kind, format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.anomalies = append(h.anomalies, anomaly{kind, fmt.Sprintf(format, args...)})
}

// step logs a fault as a line of the replay script.
func (h *torture) step(cmd string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.script = append(h.script, fmt.Sprintf("# t+%v", time.Since(h.start).Round(time.Millisecond)), cmd)
}

func (h *torture) scriptText() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	acks := h.cfg.acks.String()
	fmt.Fprintf(&b, "# torture seed %d, %d messages; replay the run: go test ./broker -run 'TestTorture$' -torture.seed=%d -torture.messages=%d\n",
		h.cfg.seed, h.cfg.messages, h.cfg.seed, h.cfg.messages)
	b.WriteString("cluster nodes=3 timing=fast\n")
	fmt.Fprintf(&b, "topic create %s partitions=2\n", tortureTopic)
	fmt.Fprintf(&b, "queue create %s visibility=500ms max-receives=3 dlq=%s max-length=%d\n", tortureQueue, tortureDLQ, tortureQueueMax)
	for _, p := range []string{"p1", "p2"} {
		fmt.Fprintf(&b, "load %s rate=100/s for=%ds key=%s-k{n} acks=%s idempotent=%v as=%s batch=5\n",
			tortureTopic, max(1, h.cfg.messages/2/100), p, acks, h.cfg.idem, p)
	}
	for _, cn := range []string{"c1", "c2"} {
		fmt.Fprintf(&b, "consumer start %s group=%s topic=%s\n", cn, tortureGroup, tortureTopic)
	}
	for _, w := range []string{"w1", "w2"} {
		fmt.Fprintf(&b, "worker start %s queue=%s\n", w, tortureQueue)
	}
	for _, l := range h.script {
		b.WriteString(l + "\n")
	}
	b.WriteString("heal\ncheck\n")
	return b.String()
}

const tortureQueueMax = 60

func tortureParams() (seeds []uint64, messages int) {
	n, m := *tortureSeeds, *tortureMessages
	if *tortureLong {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["torture.seeds"] {
			n = 200
		}
		if !set["torture.messages"] {
			m = 5000
		}
	}
	if *tortureSeed != 0 {
		return []uint64{*tortureSeed}, m
	}
	for s := 1; s <= n; s++ {
		seeds = append(seeds, uint64(s))
	}
	return seeds, m
}

func TestTorture(t *testing.T) {
	t.Parallel()
	seeds, messages := tortureParams()
	begin := time.Now()
	var (
		mu     sync.Mutex
		passed int
		total  tortureStats
		wg     sync.WaitGroup
		slots  = make(chan struct{}, max(1, *tortureParallel))
	)
	for _, seed := range seeds {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				h := runTorture(t, tortureConfig{seed: seed, messages: messages, acks: AcksAll, idem: true})
				mu.Lock()
				total.add(h.stats)
				mu.Unlock()
				if len(h.anomalies) > 0 {
					t.Errorf("seed %d: %s\nthe schedule, as an mqlab script:\n%s", seed, summarize(h.anomalies), h.scriptText())
				}
			})
			if ok {
				mu.Lock()
				passed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d of %d seeds passed, %d messages each, %d at a time, in %v; %d faults; produced: %d acked, %d unknown (%d of them committed, each once), %d failed; queue sends: %d acked, %d unknown, %d rejected",
		passed, len(seeds), messages, max(1, *tortureParallel), time.Since(begin).Round(time.Millisecond), total.faults,
		total.acked, total.unknown, total.unknownCommitted, total.failed, total.queueAcked, total.queueUnknown, total.rejected)
}

// summarize counts the anomalies by name and shows a few of each.
func summarize(as []anomaly) string {
	byKind := map[string][]string{}
	for _, a := range as {
		byKind[a.kind] = append(byKind[a.kind], a.detail)
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b strings.Builder
	for _, k := range kinds {
		d := byKind[k]
		fmt.Fprintf(&b, "%s: %d", k, len(d))
		for i, s := range d {
			if i == 3 {
				fmt.Fprintf(&b, "\n    …")
				break
			}
			fmt.Fprintf(&b, "\n    %s", s)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (h *torture) kinds() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for _, a := range h.anomalies {
		out[a.kind]++
	}
	return out
}

// runTorture runs one schedule and checks it; the anomalies are in the
// returned value, infrastructure failures (a cluster that never drains)
// fail the test.
func runTorture(t *testing.T, cfg tortureConfig) *torture {
	// Every replica writes its segment files, so kills and restarts go
	// through reading them back.
	c, err := NewCluster(Config{Nodes: 3, DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	h := &torture{
		t: t, c: c, cfg: cfg,
		produced:  map[string]Outcome{},
		sent:      map[string]Outcome{},
		ackTried:  map[string]bool{},
		confirmed: map[TopicPartition]int64{},
		maxSeen:   map[TopicPartition]int64{},
		delivered: map[TopicPartition][]int64{},
		why:       map[string]int{},
	}
	defer func() {
		if t.Failed() {
			t.Logf("the schedule so far, as an mqlab script:\n%s", h.scriptText())
		}
	}()
	mustCreate(t, c, TopicConfig{Name: tortureTopic, Partitions: 2})
	mustQueue(t, c, QueueConfig{Name: tortureQueue, Visibility: 500 * time.Millisecond, MaxReceives: 3, DLQ: tortureDLQ, MaxLength: tortureQueueMax})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.start = time.Now()

	// The load: two producers, a queue sender. When they are done the
	// schedule stops.
	var load sync.WaitGroup
	var producers []*Producer
	for _, name := range []string{"p1", "p2"} {
		pc := ProducerConfig{ClientID: name, Acks: cfg.acks, Idempotent: cfg.idem, BatchSize: 5}
		if name == "p2" {
			// An impatient producer: it gives up on a batch after a few
			// tries, so failovers leave some outcomes unknown.
			pc.DeliveryTimeout = 400 * time.Millisecond
		}
		p := mustProducer(t, c, pc)
		producers = append(producers, p)
		load.Add(1)
		go func() {
			defer load.Done()
			h.produce(ctx, p, cfg.messages/2)
		}()
	}
	qs := mustQueueClient(t, c, QueueClientConfig{ClientID: "qs"})
	load.Add(1)
	go func() {
		defer load.Done()
		h.send(ctx, qs, max(10, cfg.messages/3))
	}()

	// The readers: a group of two consumers, two workers, and a watch on
	// the group's committed offsets. They stop after the drain.
	rctx, rcancel := context.WithCancel(ctx)
	var readers sync.WaitGroup
	for i, name := range []string{"c1", "c2"} {
		skip := cfg.skipCommit && i == 0
		readers.Add(1)
		go func() {
			defer readers.Done()
			h.consume(rctx, name, skip)
		}()
	}
	for i, name := range []string{"w1", "w2"} {
		w := mustQueueClient(t, c, QueueClientConfig{ClientID: name, Prefetch: 10})
		rng := rand.New(rand.NewPCG(cfg.seed, uint64(100+i)))
		readers.Add(1)
		go func() {
			defer readers.Done()
			h.work(rctx, w, rng)
		}()
	}
	readers.Add(1)
	go func() {
		defer readers.Done()
		h.watchOffsets(rctx)
	}()

	// The schedule.
	loadDone := make(chan struct{})
	go func() {
		load.Wait()
		close(loadDone)
	}()
	if cfg.faults != nil {
		cfg.faults(h)
		<-loadDone
	} else {
		h.randomFaults(loadDone)
	}

	// Heal, stop the readers, and wait until every group has a ready
	// leader and every replica holds what its leader has.
	h.healAll()
	rcancel()
	readers.Wait()
	h.drain()
	if *tortureLiveness {
		h.probe(producers)
		h.drain() // the probes too, on every replica, before the logs are compared
	}

	h.check()
	return h
}

// tortureTick paces the load: each producer sends a request of ten
// messages, and the queue sender one of five, per tick at most, so that a
// schedule of a few hundred messages lasts long enough for a dozen faults.
const tortureTick = 100 * time.Millisecond

// produce writes n keyed messages, ten per request, five per batch.
func (h *torture) produce(ctx context.Context, p *Producer, n int) {
	name := p.ClientID()
	tick := time.NewTicker(tortureTick)
	defer tick.Stop()
	for start := 0; start < n && ctx.Err() == nil; start += 10 {
		<-tick.C
		var msgs []Message
		for i := start; i < min(n, start+10); i++ {
			msgs = append(msgs, Message{Topic: tortureTopic, Key: []byte(fmt.Sprintf("%s-k%d", name, i%5)),
				Value: []byte(fmt.Sprintf("value %d", i)), MsgID: fmt.Sprintf("%s-%d", name, i)})
		}
		rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		res := p.Produce(rctx, msgs...)
		cancel()
		h.mu.Lock()
		for i, r := range res {
			h.produced[msgs[i].MsgID] = r.Outcome
			if r.Outcome != OutcomeAcked {
				h.why[r.Outcome.String()+": "+errorClass(r.Err)]++
			}
		}
		h.mu.Unlock()
	}
}

// errorClass names why a produce was not acknowledged, for the log.
func errorClass(err error) string {
	for _, e := range []error{ErrOutOfOrderSequence, ErrDuplicateSequence, ErrUnknownOutcome, ErrNoLeader, ErrNotLeader, context.DeadlineExceeded} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	if err == nil {
		return "no error"
	}
	s := err.Error()
	return s[strings.LastIndex(s, ": ")+2:]
}

// probe has every producer, once the cluster is healed and drained, write
// one message to each partition: each must be acknowledged.
func (h *torture) probe(producers []*Producer) {
	for _, p := range producers {
		for part := 0; part < 2; part++ {
			// One key per probe: the order check compares a key's
			// messages by number, and a probe has none.
			id := fmt.Sprintf("%s-probe%d", p.ClientID(), part)
			m := Message{Topic: tortureTopic, Partition: part, Pinned: true, Key: []byte(id), MsgID: id, Value: []byte("probe")}
			r := p.Produce(ctxFor(h.t, 30*time.Second), m)[0]
			h.mu.Lock()
			h.produced[m.MsgID] = r.Outcome
			h.mu.Unlock()
			if r.Outcome != OutcomeAcked {
				h.report(anomalyStuck, "%s cannot write to %s/%d after the heal: %v %v", p.ClientID(), tortureTopic, part, r.Outcome, r.Err)
			}
		}
	}
}

// send puts n messages on the queue, five per request.
func (h *torture) send(ctx context.Context, qc *QueueClient, n int) {
	tick := time.NewTicker(tortureTick)
	defer tick.Stop()
	for start := 0; start < n && ctx.Err() == nil; start += 5 {
		<-tick.C
		var msgs []QueueMessage
		for i := start; i < min(n, start+5); i++ {
			msgs = append(msgs, QueueMessage{Body: []byte(fmt.Sprintf("job %d", i)), MsgID: fmt.Sprintf("q-%d", i)})
		}
		rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		res := qc.Send(rctx, tortureQueue, msgs...)
		cancel()
		h.mu.Lock()
		for _, r := range res {
			if r.Rejected && r.Outcome == OutcomeFailed {
				h.rejected++
			}
			h.sent[r.MsgID] = r.Outcome
		}
		h.mu.Unlock()
	}
}

// consume runs one member of the group: poll, process (record), commit.
// A record is processed once its commit returns; delivering it again
// after that is a reprocessing. With skip, the member reports one batch as
// committed without committing it and crashes; a new member takes over.
func (h *torture) consume(ctx context.Context, name string, skip bool) {
	var cn *Consumer
	for cn == nil {
		jctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		var err error
		cn, err = h.c.NewConsumer(jctx, ConsumerConfig{ClientID: name, Group: tortureGroup, Topics: []string{tortureTopic}})
		cancel()
		if ctx.Err() != nil {
			if cn != nil {
				cn.Close()
			}
			return
		}
		if err != nil {
			cn = nil
		}
	}
	defer func() { cn.Close() }()
	batches := 0
	for ctx.Err() == nil {
		gen := cn.Generation()
		recs, err := cn.Poll(ctx)
		if errors.Is(err, ErrConsumerClosed) {
			return
		}
		if err != nil || len(recs) == 0 {
			continue
		}
		last := map[TopicPartition]int64{}
		h.mu.Lock()
		for _, r := range recs {
			if c, ok := h.confirmed[r.TopicPartition]; ok && r.Offset < c {
				h.anomalies = append(h.anomalies, anomaly{anomalyReprocess,
					fmt.Sprintf("%s got %s@%d again after offset %d was committed", name, r.TopicPartition, r.Offset, c)})
			}
			h.delivered[r.TopicPartition] = append(h.delivered[r.TopicPartition], r.Offset)
			last[r.TopicPartition] = max(last[r.TopicPartition], r.Offset+1)
		}
		h.mu.Unlock()
		batches++
		if skip && batches == 3 {
			// The bug: the application believes it committed, then dies.
			h.confirm(last)
			h.step(fmt.Sprintf("consumer stop %s  # crashed after skipping its commit", name))
			cn.Crash()
			h.consume(ctx, name+"-replacement", false)
			return
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = cn.Commit(cctx)
		cancel()
		if err == nil && gen != 0 && cn.Generation() == gen {
			// Only partitions still assigned were committed.
			for tp := range last {
				if !slices.Contains(cn.Assignment(), tp) {
					delete(last, tp)
				}
			}
			h.confirm(last)
		}
	}
}

func (h *torture) confirm(last map[TopicPartition]int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for tp, off := range last {
		h.confirmed[tp] = max(h.confirmed[tp], off)
	}
}

// work receives from the queue and acks, nacking one in eight.
func (h *torture) work(ctx context.Context, w *QueueClient, rng *rand.Rand) {
	for ctx.Err() == nil {
		ds, err := w.Receive(ctx, tortureQueue, 5, 0, 100*time.Millisecond)
		if err != nil {
			continue
		}
		for _, d := range ds {
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if rng.IntN(8) == 0 {
				w.Nack(actx, tortureQueue, d.ReceiptHandle, 0, "torture")
			} else {
				h.mu.Lock()
				h.ackTried[d.MsgID] = true
				h.mu.Unlock()
				w.Ack(actx, tortureQueue, d.ReceiptHandle)
			}
			cancel()
		}
	}
}

// watchOffsets samples the group's committed offsets as its coordinator
// serves them; one that moves backwards is an anomaly. Samples taken while
// no coordinator serves are skipped: DescribeGroup then rebuilds the group
// from the replica with the highest high-water mark it knows, and a
// follower learns the commit index only with the next heartbeat, so that
// view can lag what was committed (seen here: 106 after 116 while the
// coordinator's node was killed).
func (h *torture) watchOffsets(ctx context.Context) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		g, err := h.c.DescribeGroup(dctx, tortureGroup)
		cancel()
		if err != nil {
			continue
		}
		h.noteCommitted(g)
	}
}

func (h *torture) noteCommitted(g ConsumerGroupState) {
	if g.Coordinator == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range g.Partitions {
		if p.Committed < 0 {
			continue
		}
		if prev, ok := h.maxSeen[p.TopicPartition]; ok && p.Committed < prev {
			h.anomalies = append(h.anomalies, anomaly{anomalyRegression,
				fmt.Sprintf("%s: committed offset %d after %d (by %s, coordinator %s)", p.TopicPartition, p.Committed, prev, p.CommittedBy, g.Coordinator)})
		}
		h.maxSeen[p.TopicPartition] = max(h.maxSeen[p.TopicPartition], p.Committed)
	}
}

// The clients faults are armed for.
var (
	tortureReplyClients = []string{"p1", "p2", "qs", "w1", "c1"}
	tortureAckClients   = []string{"w1", "w2", "c1", "c2"}
)

// randomFaults applies random faults at random intervals until done, never
// with more than one node killed or cut off at a time.
func (h *torture) randomFaults(done <-chan struct{}) {
	rng := rand.New(rand.NewPCG(h.cfg.seed, 1))
	var down, cut string
	for {
		timer := time.NewTimer(time.Duration(10+rng.IntN(140)) * time.Millisecond)
		select {
		case <-done:
			timer.Stop()
			return
		case <-timer.C:
		}
		nodes := h.c.Nodes()
		target := nodes[rng.IntN(len(nodes))]
		if rng.IntN(2) == 0 { // aim at a leader half the time
			var l string
			switch rng.IntN(4) {
			case 0, 1:
				l = h.c.Leader(TopicPartition{tortureTopic, rng.IntN(2)})
			case 2:
				l = h.c.QueueLeader(tortureQueue)
			case 3:
				l = h.c.Leader(h.c.CoordinatorPartition(tortureGroup))
			}
			if l != "" {
				target = l
			}
		}
		others := slices.DeleteFunc(slices.Clone(nodes), func(n string) bool { return n == target })
		switch r := rng.IntN(100); {
		case r < 30 && (down != "" || cut != ""):
			if down != "" {
				if err := h.c.Restart(down); err != nil {
					h.t.Fatalf("restart %s: %v", down, err)
				}
				h.step("restart " + down)
				down = ""
			} else {
				h.c.Heal()
				h.step("heal")
				cut = ""
			}
		case r < 45 && down == "" && cut == "":
			if err := h.c.Kill(target); err != nil {
				h.t.Fatalf("kill %s: %v", target, err)
			}
			h.step("kill " + target)
			down = target
		case r < 55 && down == "" && cut == "":
			if err := h.c.Isolate(target); err != nil {
				h.t.Fatalf("isolate %s: %v", target, err)
			}
			h.step("isolate " + target)
			cut = target
		case r < 65 && down == "" && cut == "":
			if err := h.c.Partition([]string{target}, others); err != nil {
				h.t.Fatalf("partition: %v", err)
			}
			h.step(fmt.Sprintf("partition %s | %s", target, strings.Join(others, ",")))
			cut = target
		case r < 75 && target != down:
			d := time.Duration(10+rng.IntN(70)) * time.Millisecond
			if rng.IntN(3) == 0 {
				d = 0
			}
			if err := h.c.Slow(target, d); err != nil {
				h.t.Fatalf("slow %s: %v", target, err)
			}
			if d == 0 {
				h.step(fmt.Sprintf("slow %s off", target))
			} else {
				h.step(fmt.Sprintf("slow %s %v", target, d))
			}
		case r < 88:
			cl := tortureReplyClients[rng.IntN(len(tortureReplyClients))]
			if err := h.c.DropNextReply(cl); err != nil {
				h.t.Fatalf("drop next reply to %s: %v", cl, err)
			}
			h.step("drop next reply to " + cl)
		default:
			cl := tortureAckClients[rng.IntN(len(tortureAckClients))]
			if err := h.c.DropNextAck(cl); err != nil {
				h.t.Fatalf("drop next ack from %s: %v", cl, err)
			}
			h.step("drop next ack from " + cl)
		}
	}
}

// healAll ends every fault: links, latency, and killed nodes.
func (h *torture) healAll() {
	h.c.Heal()
	for _, n := range h.c.Snapshot().Nodes {
		if !n.Up {
			if err := h.c.Restart(n.ID); err != nil {
				h.t.Fatalf("restart %s: %v", n.ID, err)
			}
			h.step("restart " + n.ID)
		}
	}
}

// drain waits, with room for a replication backoff grown during a long
// cut, until every partition and queue has a ready leader and its replicas
// converge.
func (h *torture) drain() {
	ctx := ctxFor(h.t, 60*time.Second)
	for _, tp := range h.partitions() {
		if _, err := h.c.WaitForLeader(ctx, tp); err != nil {
			h.t.Fatalf("%s has no leader after the heal: %v", tp, err)
		}
		waitConverged(h.t, h.c, tp)
	}
	for _, q := range []string{tortureQueue, tortureDLQ} {
		if _, err := h.c.WaitForQueueLeader(ctx, q); err != nil {
			h.t.Fatalf("queue %s has no leader after the heal: %v", q, err)
		}
	}
}

func (h *torture) partitions() []TopicPartition {
	out := []TopicPartition{{tortureTopic, 0}, {tortureTopic, 1}}
	for _, tc := range h.c.Topics() {
		if tc.Name == OffsetsTopic {
			for p := 0; p < tc.Partitions; p++ {
				out = append(out, TopicPartition{OffsetsTopic, p})
			}
		}
	}
	return out
}

// check compares what the clients were told with what the replicas hold.
func (h *torture) check() {
	t := h.t
	// Replicas' committed logs are identical.
	logs := map[TopicPartition][]Record{}
	for _, tp := range h.partitions() {
		p := partitionState(h.c.Snapshot(), tp)
		var first []Record
		for i, r := range p.Replicas {
			log := committedLog(t, h.c, r.Node, tp)
			if i == 0 {
				first = log
				continue
			}
			if d := diffLogs(first, log); d != "" {
				h.report(anomalyDiverged, "%s: %s and %s: %s", tp, p.Replicas[0].Node, r.Node, d)
			}
		}
		logs[tp] = first
	}

	// The topic: nothing acknowledged lost, nothing twice, keys in order,
	// nothing reported failed written.
	seen := map[string]int{}
	lastByKey := map[string]int{}
	for part := 0; part < 2; part++ {
		tp := TopicPartition{tortureTopic, part}
		for _, r := range logs[tp] {
			seen[r.MsgID]++
			n, _ := strconv.Atoi(r.MsgID[strings.LastIndexByte(r.MsgID, '-')+1:])
			if prev, ok := lastByKey[string(r.Key)]; ok && n <= prev {
				h.report(anomalyOrder, "key %s: %s at %s@%d after message %d", r.Key, r.MsgID, tp, r.Offset, prev)
			}
			lastByKey[string(r.Key)] = n
		}
	}
	h.mu.Lock()
	produced := h.produced
	h.mu.Unlock()
	counts := map[Outcome]int{}
	unknownIn := 0
	for _, id := range sortedKeys(produced) {
		o := produced[id]
		counts[o]++
		switch {
		case o == OutcomeAcked && seen[id] == 0:
			h.report(anomalyLost, "acknowledged %s is not in the log", id)
		case o == OutcomeFailed && seen[id] > 0:
			h.report(anomalyPhantom, "%s was reported failed but is in the log", id)
		case o == OutcomeUnknown && seen[id] > 0:
			unknownIn++
		}
	}
	for _, id := range sortedKeys(seen) {
		if seen[id] > 1 {
			h.report(anomalyDuplicate, "%s is in the log %d times", id, seen[id])
		}
		if _, ok := produced[id]; !ok {
			h.report(anomalyPhantom, "%s is in the log but was never produced", id)
		}
	}

	// The group: a last look at the committed offsets.
	if g, err := h.c.DescribeGroup(ctxFor(t, 10*time.Second), tortureGroup); err == nil {
		h.noteCommitted(g)
	}

	// The queues: the queue's own accounting, and every acknowledged send
	// acked by a worker (or tried), dead-lettered or still held.
	qcounts := checkQueueAccounting(t, h.c, tortureQueue, tortureDLQ)
	held := map[string]bool{}
	for _, q := range []string{tortureQueue, tortureDLQ} {
		ms, err := h.c.QueueMessages(ctxFor(t, 10*time.Second), q)
		if err != nil {
			t.Fatalf("messages of %s: %v", q, err)
		}
		for _, m := range ms {
			held[m.MsgID] = true
		}
	}
	h.mu.Lock()
	sent, ackTried, rejected := h.sent, h.ackTried, h.rejected
	h.mu.Unlock()
	sentCounts := map[Outcome]int{}
	for _, id := range sortedKeys(sent) {
		o := sent[id]
		sentCounts[o]++
		if o == OutcomeAcked && !held[id] && !ackTried[id] {
			h.report(anomalyLost, "queue message %s was acknowledged to its sender but is neither acked, dead-lettered nor held", id)
		}
	}
	if len(h.why) > 0 {
		t.Logf("seed %d: produce outcomes other than acked: %v", h.cfg.seed, h.why)
	}
	h.stats = tortureStats{faults: len(h.script) / 2, acked: counts[OutcomeAcked], unknown: counts[OutcomeUnknown], unknownCommitted: unknownIn,
		failed: counts[OutcomeFailed], queueAcked: sentCounts[OutcomeAcked], queueUnknown: sentCounts[OutcomeUnknown], rejected: rejected}
	k := qcounts[tortureQueue]
	if uint64(rejected) > k.Rejected {
		h.report(anomalyLost, "the sender saw %d sends rejected, the queue counted %d", rejected, k.Rejected)
	}

	h.mu.Lock()
	delivered := 0
	for _, d := range h.delivered {
		delivered += len(d)
	}
	h.mu.Unlock()
	t.Logf("seed %d: %d faults; topic: %d acked, %d unknown (%d of them committed, once), %d failed, %d in the log; group: %d deliveries, committed %v; queue: %d acked sends, %d unknown, %d failed (%d rejected apart), queue counted sent %d, acked %d, dead-lettered %d, held %d",
		h.cfg.seed, len(h.script)/2, counts[OutcomeAcked], counts[OutcomeUnknown], unknownIn, counts[OutcomeFailed],
		len(logs[TopicPartition{tortureTopic, 0}])+len(logs[TopicPartition{tortureTopic, 1}]),
		delivered, h.maxSeen,
		sentCounts[OutcomeAcked], sentCounts[OutcomeUnknown], sentCounts[OutcomeFailed], rejected,
		k.Sent, k.Acked, k.DeadLettered, k.Held())
}

func diffLogs(a, b []Record) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d committed records against %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Offset != y.Offset || x.Epoch != y.Epoch || x.MsgID != y.MsgID || string(x.Value) != string(y.Value) {
			return fmt.Sprintf("differ at offset %d: %s (epoch %d) vs %s (epoch %d)", x.Offset, x.MsgID, x.Epoch, y.MsgID, y.Epoch)
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// --- Mutations: each breaks one guarantee on purpose; the check must name it.

// expectAnomaly fails unless the run reported kind.
func expectAnomaly(t *testing.T, h *torture, kind string) {
	t.Helper()
	got := h.kinds()
	if got[kind] == 0 {
		t.Fatalf("the check missed the %s anomaly; it reported %v", kind, got)
	}
	t.Logf("caught as expected: %s", strings.ReplaceAll(strings.TrimSpace(summarize(h.anomalies)), "\n", "; "))
}

// acks=1, and the leader of orders/0 cut off from its followers (clients
// still reach it) while a producer writes: what it acknowledged within its
// lease is truncated when it rejoins.
func TestTortureCatchesAcksOneLoss(t *testing.T) {
	t.Parallel()
	h := runTorture(t, tortureConfig{seed: 1, messages: 40, acks: AcksLeader,
		faults: func(h *torture) {
			tp := TopicPartition{tortureTopic, 0}
			leader, err := h.c.WaitForLeader(ctxFor(h.t, 10*time.Second), tp)
			if err != nil {
				h.t.Fatal(err)
			}
			others := slices.DeleteFunc(h.c.Nodes(), func(n string) bool { return n == leader })
			if err := h.c.Partition([]string{leader}, others); err != nil {
				h.t.Fatal(err)
			}
			h.step(fmt.Sprintf("partition %s | %s", leader, strings.Join(others, ",")))
			fast := mustProducer(h.t, h.c, ProducerConfig{ClientID: "fast", Acks: AcksLeader, BatchSize: 5})
			var msgs []Message
			for i := 0; i < 5; i++ {
				msgs = append(msgs, Message{Topic: tortureTopic, Partition: 0, Pinned: true,
					Key: []byte(fmt.Sprintf("fast-k%d", i)), MsgID: fmt.Sprintf("fast-%d", i), Value: []byte("fast")})
			}
			h.step("produce orders partition=0 acks=1 as=fast count=5 batch=5")
			res := fast.Produce(ctxFor(h.t, 10*time.Second), msgs...)
			h.mu.Lock()
			for i, r := range res {
				h.produced[msgs[i].MsgID] = r.Outcome
			}
			h.mu.Unlock()
			waitFor(h.t, 10*time.Second, "a leader of orders/0 on the majority side", func() bool {
				l := h.c.Leader(tp)
				return l != "" && l != leader
			})
		}})
	expectAnomaly(t, h, anomalyLost)
}

// Idempotence off, and the producers' replies lost: each retry writes the
// batch again.
func TestTortureCatchesDuplicates(t *testing.T) {
	t.Parallel()
	h := runTorture(t, tortureConfig{seed: 1, messages: 100, acks: AcksAll, idem: false,
		faults: func(h *torture) {
			for i := 0; i < 3; i++ {
				if err := h.c.DropNextReply("p1"); err != nil {
					h.t.Fatal(err)
				}
				h.step("drop next reply to p1")
				waitFor(h.t, 20*time.Second, "the lost reply to fire", func() bool { return len(h.c.Armed("p1")) == 0 })
			}
		}})
	expectAnomaly(t, h, anomalyDuplicate)
}

// A consumer that reports a batch as committed without committing it, and
// crashes: its replacement gets those records again.
func TestTortureCatchesSkippedCommit(t *testing.T) {
	t.Parallel()
	h := runTorture(t, tortureConfig{seed: 1, messages: 200, acks: AcksAll, idem: true, skipCommit: true,
		faults: func(h *torture) {
			waitFor(h.t, 30*time.Second, "the replacement to get the uncommitted batch", func() bool { return h.kinds()[anomalyReprocess] > 0 })
		}})
	expectAnomaly(t, h, anomalyReprocess)
}
