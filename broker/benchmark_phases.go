package broker

// The phases RunBench runs, each on a cluster of its own. The Go benchmarks
// call them too, with b.N as the amount of work.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/partlog"
	"github.com/mqlab/mqlab/broker/raftnet"
)

const (
	benchWorkers = 4 // concurrent producers, and concurrent raft appliers
	benchWarmup  = 5 // untimed batches per worker before measuring
	benchTopic   = "bench"
	// benchWait bounds every wait of a phase for the cluster (a leader, a
	// stable group, a drained log).
	benchWait = time.Minute
)

// BenchRate is the outcome of one timed phase.
type BenchRate struct {
	Messages int
	Batches  int // requests or raft entries; 0 where a phase has none of its own
	Elapsed  time.Duration
	CPU      time.Duration // the process's CPU time (user+system) meanwhile; 0 where unknown
}

// MsgsPerSec is the phase's throughput in messages.
func (r BenchRate) MsgsPerSec() float64 { return float64(r.Messages) / r.Elapsed.Seconds() }

// MBPerSec counts value bytes only (1 MB = 10^6 bytes, as go test's MB/s).
func (r BenchRate) MBPerSec() float64 {
	return float64(r.Messages) * BenchValueBytes / 1e6 / r.Elapsed.Seconds()
}

// Cores is the average number of CPUs busy during the phase.
func (r BenchRate) Cores() float64 { return r.CPU.Seconds() / r.Elapsed.Seconds() }

// CPUPerBatch is the process's CPU time per batch, in microseconds: on a
// machine shared with other work, throughput swings with the load and CPU
// per batch is the steadier figure.
func (r BenchRate) CPUPerBatch() float64 {
	return float64(r.CPU.Microseconds()) / float64(max(r.Batches, 1))
}

// firstErr keeps the first error of several goroutines.
type firstErr struct {
	mu  sync.Mutex
	err error
}

func (f *firstErr) set(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
}

func (f *firstErr) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// runWorkers runs benchWorkers goroutines that share total batches between
// them; worker w sends its k-th batch with do(w, k). finish, when set, runs
// after the last batch inside the timed span. It returns the wall and CPU
// time from the first batch to the end of finish.
func runWorkers(ctx context.Context, total int, do func(w, k int) error, finish func() error) (BenchRate, error) {
	var next atomic.Int64
	var ferr firstErr
	var wg sync.WaitGroup
	runtime.GC() // a phase does not pay for the garbage of the one before
	cpu0 := processCPU()
	start := time.Now()
	for w := range benchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; next.Add(1) <= int64(total); k++ {
				if err := ctx.Err(); err != nil {
					ferr.set(err)
					return
				}
				if err := do(w, k); err != nil {
					ferr.set(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := ferr.get(); err != nil {
		return BenchRate{}, err
	}
	if finish != nil {
		if err := finish(); err != nil {
			return BenchRate{}, err
		}
	}
	return BenchRate{Messages: total * BenchBatch, Batches: total, Elapsed: time.Since(start), CPU: processCPU() - cpu0}, nil
}

// benchValues returns BenchBatch distinct values of BenchValueBytes bytes.
func benchValues(seed int) [][]byte {
	vals := make([][]byte, BenchBatch)
	for i := range vals {
		v := make([]byte, BenchValueBytes)
		for j := range v {
			v[j] = byte('a' + (seed+i+j)%26)
		}
		vals[i] = v
	}
	return vals
}

// ProduceBench is one produce phase.
type ProduceBench struct {
	Acks       Acks
	Idempotent bool // needs AcksAll
	Partitions int
	Batches    int // produce requests timed, of BenchBatch messages each
}

// BenchProduce starts a cluster of BenchNodes with one topic of
// pb.Partitions partitions (RF 3, leaders spread by CreateTopic), gives
// each of benchWorkers goroutines its own producer with BatchSize
// BenchBatch, and times pb.Batches produce requests of BenchBatch pinned
// messages each; worker w sends its k-th batch to partition (w+k) mod
// partitions. With acks=0 nobody waits for the broker, so the phase ends
// only when everything sent is committed. It also returns the size of a
// produce entry in the leader's raft log, to check the raw-raft side
// applies entries of the same size.
//
// The topic has the lab's defaults (16-record segments, no retention), so
// every message stays in memory on every replica, and each raft snapshot
// (every SnapshotThreshold entries) serialises the whole log: the longer
// the run, the lower the rate.
func BenchProduce(ctx context.Context, pb ProduceBench) (BenchRate, int, error) {
	c, err := NewCluster(Config{Nodes: BenchNodes})
	if err != nil {
		return BenchRate{}, 0, fmt.Errorf("start cluster: %w", err)
	}
	defer c.Close()
	wctx, cancel := context.WithTimeout(ctx, benchWait)
	defer cancel()
	if err := c.CreateTopic(wctx, TopicConfig{Name: benchTopic, Partitions: pb.Partitions, RF: BenchNodes}); err != nil {
		return BenchRate{}, 0, err
	}
	producers := make([]*Producer, benchWorkers)
	msgs := make([][]Message, benchWorkers)
	for w := range producers {
		producers[w], err = c.NewProducer(wctx, ProducerConfig{
			ClientID:   fmt.Sprintf("bench-producer-%d", w),
			Acks:       pb.Acks,
			Idempotent: pb.Idempotent,
			BatchSize:  BenchBatch,
		})
		if err != nil {
			return BenchRate{}, 0, err
		}
		msgs[w] = make([]Message, BenchBatch)
		for i, v := range benchValues(w) {
			msgs[w][i] = Message{Topic: benchTopic, Pinned: true, Value: v}
		}
	}
	want := OutcomeAcked
	if pb.Acks == AcksNone {
		want = OutcomeSent
	}
	send := func(w, k int) error {
		part := (w + k) % pb.Partitions
		ms := msgs[w]
		for i := range ms {
			ms[i].Partition = part
		}
		for i, r := range producers[w].Produce(ctx, ms...) {
			if r.Outcome != want {
				return fmt.Errorf("producer %d, batch %d, message %d: %v: %w", w, k, i, r.Outcome, r.Err)
			}
		}
		return nil
	}
	// With acks=0 a phase ends when everything sent is committed, or when
	// a leader has changed and no leader holds anything uncommitted:
	// fire-and-forget writes a deposed leader held are gone, and the
	// rate counts only the committed ones.
	sent := 0
	var terms []uint64
	var committed int64
	drained := func() error {
		return poll(wctx, func() bool {
			var changed bool
			committed, changed = drainedMessages(c, pb.Partitions, terms)
			return committed >= int64(sent*BenchBatch) || changed && committed >= 0
		})
	}
	warm := benchWorkers * max(benchWarmup, pb.Partitions)
	var finish func() error
	if pb.Acks == AcksNone {
		finish = drained
	}
	sent += warm
	terms = leaderTerms(c, pb.Partitions)
	if _, err := runWorkers(ctx, warm, send, finish); err != nil {
		return BenchRate{}, 0, fmt.Errorf("warm-up: %w", err)
	}
	before := committed
	terms = leaderTerms(c, pb.Partitions)
	sent += pb.Batches
	r, err := runWorkers(ctx, pb.Batches, send, finish)
	if err != nil {
		return BenchRate{}, 0, err
	}
	if pb.Acks == AcksNone {
		r.Messages = int(committed - before)
	}
	return r, lastProduceEntrySize(c, TopicPartition{benchTopic, 0}), nil
}

// leaderTerms is the raft term of each bench partition's leader, 0 where
// there is none.
func leaderTerms(c *Cluster, partitions int) []uint64 {
	terms := make([]uint64, partitions)
	for p := range partitions {
		if lead := c.leaderOf(TopicPartition{benchTopic, p}.String()); lead != nil {
			terms[p] = lead.raft().CurrentTerm()
		}
	}
	return terms
}

// drainedMessages adds up the bench partitions' committed messages as
// their leaders see them. changed reports that some leader is not of its
// term in terms; then the sum is -1 unless every leader has committed all
// it holds. The sum is -1 too while a partition has no leader.
func drainedMessages(c *Cluster, partitions int, terms []uint64) (sum int64, changed bool) {
	idle := true
	for p := range partitions {
		lead := c.leaderOf(TopicPartition{benchTopic, p}.String())
		if lead == nil {
			return -1, true
		}
		if lead.raft().CurrentTerm() != terms[p] {
			changed = true
		}
		_, hwm, _ := lead.pfsm.state()
		if lead.logEnd() != hwm {
			idle = false
		}
		sum += hwm
	}
	if changed && !idle {
		return -1, true
	}
	return sum, changed
}

// lastProduceEntrySize is the size of the newest produce entry in the
// partition leader's raft log, or 0.
func lastProduceEntrySize(c *Cluster, tp TopicPartition) int {
	lead := c.leaderOf(tp.String())
	if lead == nil {
		return 0
	}
	last, _ := lead.disk.logs.LastIndex()
	first, _ := lead.disk.logs.FirstIndex()
	for i := last; i >= first && i > 0; i-- {
		var l raft.Log
		if lead.disk.logs.GetLog(i, &l) != nil || l.Type != raft.LogCommand {
			continue
		}
		if h, _, err := decodeHeader(l.Data); err == nil && h.kind == cmdProduce {
			return len(l.Data)
		}
	}
	return 0
}

// RawProduceEntry encodes one batch the way a partition leader does:
// BenchBatch messages of BenchValueBytes, stamped with the leader's clock,
// with a producer id and sequence when idempotent.
func RawProduceEntry(idempotent bool) []byte {
	now := time.Now().UnixNano()
	batch := partlog.Batch{Records: make([]partlog.Record, BenchBatch)}
	if idempotent {
		batch.ProducerID, batch.BaseSeq = 2, 1<<20 // ids and sequences of a long run
	}
	for i, v := range benchValues(0) {
		batch.Records[i] = partlog.Record{Value: v, Timestamp: now}
	}
	return encodeProduce(1<<20, now, batch)
}

// countFSM is the raw-raft side's state machine: it only counts.
type countFSM struct{ n atomic.Uint64 }

func (f *countFSM) Apply(*raft.Log) any { return f.n.Add(1) }

func (f *countFSM) Snapshot() (raft.FSMSnapshot, error) { return countSnapshot(f.n.Load()), nil }

func (f *countFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var buf [8]byte
	if _, err := io.ReadFull(rc, buf[:]); err != nil {
		return err
	}
	f.n.Store(binary.BigEndian.Uint64(buf[:]))
	return nil
}

type countSnapshot uint64

func (s countSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(binary.BigEndian.AppendUint64(nil, uint64(s))); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (countSnapshot) Release() {}

// rawCluster is bare raft groups of BenchNodes members each, on one raftnet
// network, configured exactly like the broker's replicas.
type rawCluster struct {
	groups [][]*raft.Raft
}

func startRawCluster(groups int) (*rawCluster, error) {
	// The broker's own raftConfig, so the two sides cannot drift apart.
	confSrc := &Cluster{timing: FastTiming, logger: hclog.NewNullLogger()}
	net := raftnet.New(raftnet.Options{RPCTimeout: FastTiming.RPCTimeout})
	rc := &rawCluster{}
	for g := range groups {
		group := fmt.Sprintf("raw/%d", g)
		var servers []raft.Server
		for i := 1; i <= BenchNodes; i++ {
			id := fmt.Sprintf("n%d", i)
			servers = append(servers, raft.Server{ID: raft.ServerID(id), Address: raftnet.Addr(id, group)})
		}
		var members []*raft.Raft
		for _, s := range servers {
			node := string(s.ID)
			trans, err := net.Transport(node, group)
			if err != nil {
				rc.groups = append(rc.groups, members)
				rc.shutdown()
				return nil, err
			}
			conf := confSrc.raftConfig(node)
			logs, stable, snaps := raft.NewInmemStore(), raft.NewInmemStore(), raft.NewInmemSnapshotStore()
			err = raft.BootstrapCluster(conf, logs, stable, snaps, trans, raft.Configuration{Servers: servers})
			var r *raft.Raft
			if err == nil {
				r, err = raft.NewRaft(conf, &countFSM{}, logs, stable, snaps, trans)
			}
			if err != nil {
				trans.Close()
				rc.groups = append(rc.groups, members)
				rc.shutdown()
				return nil, fmt.Errorf("raw raft group %d on %s: %w", g, node, err)
			}
			members = append(members, r)
		}
		rc.groups = append(rc.groups, members)
	}
	return rc, nil
}

// leader waits for group g to have a leader.
func (rc *rawCluster) leader(ctx context.Context, g int) (*raft.Raft, error) {
	var lead *raft.Raft
	err := poll(ctx, func() bool {
		for _, r := range rc.groups[g] {
			if r.State() == raft.Leader {
				lead = r
				return true
			}
		}
		return false
	})
	return lead, err
}

func (rc *rawCluster) shutdown() {
	var wg sync.WaitGroup
	for _, members := range rc.groups {
		for _, r := range members {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.Shutdown().Error() // closes the transport too
			}()
		}
	}
	wg.Wait()
}

// BenchRawRaft times batches raft.Apply calls of entry on groups bare raft
// groups of BenchNodes members (the broker's raft configuration and
// network, an FSM that only counts), from benchWorkers goroutines that
// each wait for an apply's future before the next, as the broker's
// producers wait for their acks; worker w applies its k-th entry to group
// (w+k) mod groups. A worker that finds the leader gone looks for the new
// one and applies again, as the broker's producer would retry.
func BenchRawRaft(ctx context.Context, groups, batches int, entry []byte) (BenchRate, error) {
	rc, err := startRawCluster(groups)
	if err != nil {
		return BenchRate{}, err
	}
	defer rc.shutdown()
	wctx, cancel := context.WithTimeout(ctx, benchWait)
	defer cancel()
	leaders := make([]atomic.Pointer[raft.Raft], groups)
	for g := range groups {
		lead, err := rc.leader(wctx, g)
		if err != nil {
			return BenchRate{}, fmt.Errorf("raw raft group %d: no leader: %w", g, err)
		}
		if err := lead.Barrier(FastTiming.RequestTimeout).Error(); err != nil {
			return BenchRate{}, fmt.Errorf("raw raft group %d: barrier: %w", g, err)
		}
		leaders[g].Store(lead)
	}
	apply := func(w, k int) error {
		g := (w + k) % groups
		for {
			err := leaders[g].Load().Apply(entry, FastTiming.RequestTimeout).Error()
			if err == nil {
				return nil
			}
			if !errors.Is(err, raft.ErrNotLeader) && !errors.Is(err, raft.ErrLeadershipLost) &&
				!errors.Is(err, raft.ErrLeadershipTransferInProgress) && !errors.Is(err, raft.ErrEnqueueTimeout) {
				return fmt.Errorf("group %d: %w", g, err)
			}
			lead, lerr := rc.leader(wctx, g)
			if lerr != nil {
				return fmt.Errorf("group %d: %v; then no leader: %w", g, err, lerr)
			}
			leaders[g].Store(lead)
		}
	}
	if _, err := runWorkers(ctx, benchWorkers*max(benchWarmup, groups), apply, nil); err != nil {
		return BenchRate{}, fmt.Errorf("warm-up: %w", err)
	}
	return runWorkers(ctx, batches, apply, nil)
}

// ConsumeResult is one consume phase.
type ConsumeResult struct {
	Rate        BenchRate
	Partitions  int
	Members     int
	PollRecords int // records per poll, and per commit
	Commits     int
}

// BenchConsume fills a topic of partitions partitions (RF 3) with messages
// of BenchValueBytes, untimed, then times a group of members consumers
// reading all of it back from the start, polling up to 100 records at a
// time and committing after every poll (each commit an acks=all write to
// __consumer_offsets).
func BenchConsume(ctx context.Context, partitions, members, messages int) (ConsumeResult, error) {
	const pollRecords = 100
	res := ConsumeResult{Partitions: partitions, Members: members, PollRecords: pollRecords}
	c, err := NewCluster(Config{Nodes: BenchNodes})
	if err != nil {
		return res, fmt.Errorf("start cluster: %w", err)
	}
	defer c.Close()
	wctx, cancel := context.WithTimeout(ctx, benchWait)
	defer cancel()
	if err := c.CreateTopic(wctx, TopicConfig{Name: benchTopic, Partitions: partitions, RF: BenchNodes}); err != nil {
		return res, err
	}
	p, err := c.NewProducer(wctx, ProducerConfig{ClientID: "bench-producer", Acks: AcksAll, BatchSize: 500})
	if err != nil {
		return res, err
	}
	value := make([]byte, BenchValueBytes)
	for done := 0; done < messages; {
		msgs := make([]Message, min(messages-done, 15000))
		for i := range msgs {
			msgs[i] = Message{Topic: benchTopic, Value: value}
		}
		for _, r := range p.Produce(ctx, msgs...) {
			if r.Outcome != OutcomeAcked {
				return res, fmt.Errorf("fill: %v: %w", r.Outcome, r.Err)
			}
		}
		done += len(msgs)
	}

	// A fresh bound for the waits of the read: a long fill does not eat it.
	wctx, cancel = context.WithTimeout(ctx, benchWait)
	defer cancel()
	cns := make([]*Consumer, members)
	defer func() {
		for _, cn := range cns {
			if cn != nil {
				cn.Close()
			}
		}
	}()
	for i := range cns {
		cns[i], err = c.NewConsumer(wctx, ConsumerConfig{ClientID: fmt.Sprintf("bench-%d", i), Group: "bench",
			Topics: []string{benchTopic}, MaxPollRecords: pollRecords})
		if err != nil {
			return res, err
		}
	}
	if err := poll(wctx, func() bool { return groupStable(c, "bench", cns) }); err != nil {
		return res, fmt.Errorf("group of %d never stable: %w", members, err)
	}

	var got, commits atomic.Int64
	var ferr firstErr
	all := make(chan struct{})
	var once sync.Once
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	runtime.GC()
	cpu0 := processCPU()
	start := time.Now()
	var elapsed, cpu time.Duration
	for _, cn := range cns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for cctx.Err() == nil {
				recs, err := cn.Poll(cctx)
				if err != nil || len(recs) == 0 {
					continue // a rebalance or an empty poll: poll again
				}
				if err := cn.Commit(cctx); err != nil && cctx.Err() == nil {
					ferr.set(fmt.Errorf("commit: %w", err))
					once.Do(func() { close(all) })
					return
				}
				commits.Add(1)
				if got.Add(int64(len(recs))) >= int64(messages) {
					once.Do(func() {
						elapsed, cpu = time.Since(start), processCPU()-cpu0
						close(all)
					})
				}
			}
		}()
	}
	select {
	case <-all:
	case <-wctx.Done():
		ferr.set(fmt.Errorf("read %d of %d messages: %w", got.Load(), messages, wctx.Err()))
	}
	stop()
	wg.Wait()
	if err := ferr.get(); err != nil {
		return res, err
	}
	res.Rate = BenchRate{Messages: int(got.Load()), Elapsed: elapsed, CPU: cpu}
	res.Commits = int(commits.Load())
	return res, nil
}

// groupStable reports whether group is stable with exactly these members,
// each active in the group's current generation.
func groupStable(c *Cluster, group string, cns []*Consumer) bool {
	for _, g := range c.SnapshotWindow(0).Groups {
		if g.Group != group {
			continue
		}
		if g.State != "stable" || len(g.Members) != len(cns) {
			return false
		}
		for _, cn := range cns {
			if cn.Generation() != g.Generation || cn.State() != "active" {
				return false
			}
		}
		return true
	}
	return false
}

// The queue phase's shape.
const (
	queueBenchSenders   = 4
	queueBenchConsumers = 8
	queueBenchBatch     = 10
)

// QueueResult is one queue phase.
type QueueResult struct {
	Rate          BenchRate
	EntriesPerMsg float64       // raft entries the queue's group applied per message
	P50           time.Duration // median time from send to ack
}

// BenchQueue sends messages through one queue (RF 3) and times them until
// every one is received and acked. queueBenchSenders senders send batches
// of queueBenchBatch messages of BenchValueBytes (one raft entry per
// batch); queueBenchConsumers consumers receive up to queueBenchBatch at a
// time and ack them in one request (batchAck) or one request each. Every
// receive and every ack is a raft entry too: in-flight state is
// replicated, so a failover keeps it.
func BenchQueue(ctx context.Context, messages int, batchAck bool) (QueueResult, error) {
	var res QueueResult
	c, err := NewCluster(Config{Nodes: BenchNodes})
	if err != nil {
		return res, fmt.Errorf("start cluster: %w", err)
	}
	defer c.Close()
	wctx, cancel := context.WithTimeout(ctx, benchWait)
	defer cancel()
	const name = "bench"
	if err := c.CreateQueue(wctx, QueueConfig{Name: name, RF: BenchNodes, Visibility: time.Minute}); err != nil {
		return res, err
	}
	lead := c.replicaOn(c.QueueLeader(name), name)
	if lead == nil {
		return res, fmt.Errorf("queue %s has no leader", name)
	}
	firstIndex := lead.raft().AppliedIndex()
	total := int64(messages)
	body := make([]byte, BenchValueBytes)
	var claimed, acked atomic.Int64
	var ferr firstErr
	var latMu sync.Mutex
	var latencies []time.Duration
	var clients []*QueueClient
	for s := range queueBenchSenders + queueBenchConsumers {
		id := fmt.Sprintf("sender-%d", s)
		if s >= queueBenchSenders {
			id = fmt.Sprintf("worker-%d", s-queueBenchSenders)
		}
		qc, err := c.NewQueueClient(QueueClientConfig{ClientID: id})
		if err != nil {
			return res, err
		}
		clients = append(clients, qc)
	}

	runtime.GC()
	cpu0 := processCPU()
	start := time.Now()
	var wg sync.WaitGroup
	for _, qc := range clients[:queueBenchSenders] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ferr.get() == nil && wctx.Err() == nil {
				from := claimed.Add(queueBenchBatch) - queueBenchBatch
				n := min(queueBenchBatch, total-from)
				if n <= 0 {
					return
				}
				msgs := make([]QueueMessage, n)
				for i := range msgs {
					msgs[i] = QueueMessage{Body: body}
				}
				for _, r := range qc.Send(wctx, name, msgs...) {
					if r.Outcome != OutcomeAcked {
						ferr.set(fmt.Errorf("send: %v: %w", r.Outcome, r.Err))
					}
				}
			}
		}()
	}
	for _, qc := range clients[queueBenchSenders:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for acked.Load() < total && ferr.get() == nil {
				if err := wctx.Err(); err != nil {
					ferr.set(fmt.Errorf("%d of %d messages acked: %w", acked.Load(), total, err))
					return
				}
				ds, err := qc.Receive(wctx, name, queueBenchBatch, 0, 50*time.Millisecond)
				if err != nil {
					ferr.set(fmt.Errorf("receive: %w", err))
					return
				}
				if len(ds) == 0 {
					continue
				}
				receipts := make([]string, len(ds))
				for i, d := range ds {
					receipts[i] = d.ReceiptHandle
				}
				if batchAck {
					errs, err := qc.AckBatch(wctx, name, receipts)
					if err == nil {
						err = errors.Join(errs...)
					}
					if err != nil {
						ferr.set(fmt.Errorf("ack: %w", err))
						return
					}
				} else {
					for _, r := range receipts {
						if err := qc.Ack(wctx, name, r); err != nil {
							ferr.set(fmt.Errorf("ack: %w", err))
							return
						}
					}
				}
				now := c.now()
				latMu.Lock()
				for _, d := range ds {
					latencies = append(latencies, now.Sub(d.EnqueuedAt))
				}
				latMu.Unlock()
				acked.Add(int64(len(ds)))
			}
		}()
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), processCPU()-cpu0
	if err := ferr.get(); err != nil {
		return res, err
	}
	var k QueueCounts
	for _, q := range c.SnapshotWindow(0).Queues {
		if q.Config.Name == name {
			k = q.Counts
		}
	}
	if k.Acked != uint64(total) || k.Sent != uint64(total) || k.Held() != 0 {
		return res, fmt.Errorf("after %d messages the queue counts %+v; want every one sent and acked, none held", total, k)
	}
	slices.Sort(latencies)
	res.Rate = BenchRate{Messages: messages, Elapsed: elapsed, CPU: cpu}
	res.EntriesPerMsg = float64(lead.raft().AppliedIndex()-firstIndex) / float64(total)
	res.P50 = latencies[len(latencies)/2]
	return res, nil
}

// FailoverResult is one failover series.
type FailoverResult struct {
	ET      []float64       // leader killed → next acknowledged write, in election timeouts, sorted
	Took    []time.Duration // the same in wall time, in kill order
	Kills   []time.Duration // how long Kill itself took, in kill order
	Timeout time.Duration   // the election timeout
}

// Min, Median, P90 and Max summarise the series in election timeouts.
func (f FailoverResult) Min() float64    { return f.ET[0] }
func (f FailoverResult) Median() float64 { return medianOf(f.ET) }
func (f FailoverResult) P90() float64    { return f.ET[len(f.ET)*9/10] }
func (f FailoverResult) Max() float64    { return f.ET[len(f.ET)-1] }

// Mean is the mean time from kill to acknowledged write.
func (f FailoverResult) Mean() time.Duration {
	var sum time.Duration
	for _, d := range f.Took {
		sum += d
	}
	return sum / time.Duration(len(f.Took))
}

// BenchFailover kills the leader of a one-partition topic (RF 3) kills
// times and measures, from just before each kill until an acks=all write
// of an idempotent producer is acknowledged by the new leader, in election
// timeouts. After each kill the node is restarted and the partition must
// converge before the next kill. backoff, when not zero, fixes the
// producer's retry backoff (a small one keeps the client's waiting out of
// the figure); zero keeps the producer's defaults (a tenth of a heartbeat
// timeout, doubling up to one). each, when set, hears every sample.
func BenchFailover(ctx context.Context, kills int, backoff time.Duration, each func(i int, et float64)) (FailoverResult, error) {
	res := FailoverResult{Timeout: FastTiming.ElectionTimeout}
	c, err := NewCluster(Config{Nodes: BenchNodes})
	if err != nil {
		return res, fmt.Errorf("start cluster: %w", err)
	}
	defer c.Close()
	tp := TopicPartition{"failover", 0}
	wctx, cancel := context.WithTimeout(ctx, benchWait)
	defer cancel()
	if err := c.CreateTopic(wctx, TopicConfig{Name: tp.Topic, Partitions: 1, RF: BenchNodes}); err != nil {
		return res, err
	}
	p, err := c.NewProducer(wctx, ProducerConfig{ClientID: "bench-failover", Acks: AcksAll, Idempotent: true,
		RetryBackoff: backoff, RetryBackoffMax: backoff})
	if err != nil {
		return res, err
	}
	res.Timeout = c.Timing().ElectionTimeout
	for i := range kills {
		if err := func() error {
			kctx, cancel := context.WithTimeout(ctx, benchWait)
			defer cancel()
			leader, err := c.WaitForLeader(kctx, tp)
			if err != nil {
				return err
			}
			m := Message{Topic: tp.Topic, Value: fmt.Appendf(nil, "before kill %d", i)}
			before := p.Produce(kctx, m)[0]
			if before.Outcome != OutcomeAcked {
				return fmt.Errorf("write before the kill: %v: %w", before.Outcome, before.Err)
			}
			start := time.Now()
			if err := c.Kill(leader); err != nil {
				return err
			}
			killed := time.Since(start)
			m.Value = fmt.Appendf(nil, "after kill %d", i)
			after := p.Produce(kctx, m)[0]
			took := time.Since(start)
			if after.Outcome != OutcomeAcked || after.Epoch <= before.Epoch {
				return fmt.Errorf("write after killing %s: %v at epoch %d (before: %d), %d attempts: %v",
					leader, after.Outcome, after.Epoch, before.Epoch, after.Attempts, after.Err)
			}
			et := float64(took) / float64(res.Timeout)
			res.ET = append(res.ET, et)
			res.Took = append(res.Took, took)
			res.Kills = append(res.Kills, killed)
			if each != nil {
				each(i, et)
			}
			if err := c.Restart(leader); err != nil {
				return fmt.Errorf("restart %s: %w", leader, err)
			}
			if err := poll(kctx, func() bool { return benchConverged(c, tp) }); err != nil {
				return fmt.Errorf("replicas did not converge after restarting %s: %w", leader, err)
			}
			return nil
		}(); err != nil {
			return res, fmt.Errorf("kill %d: %w", i+1, err)
		}
	}
	slices.Sort(res.ET)
	return res, nil
}

// benchConverged reports whether every replica of tp is up and has written
// and committed exactly what the others have, under a leader ready to
// serve.
func benchConverged(c *Cluster, tp TopicPartition) bool {
	lead := c.leaderOf(tp.String())
	if lead == nil || !lead.readyLeader() {
		return false
	}
	var p PartitionState
	for _, t := range c.SnapshotWindow(0).Topics {
		for _, q := range t.Partitions {
			if q.Topic == tp.Topic && q.Partition == tp.Partition {
				p = q
			}
		}
	}
	if len(p.Replicas) != BenchNodes {
		return false
	}
	for _, r := range p.Replicas {
		if !r.Up || r.Role == "candidate" || r.LogEnd != r.HighWatermark || r.HighWatermark != p.Replicas[0].HighWatermark {
			return false
		}
	}
	return true
}
