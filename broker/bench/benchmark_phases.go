package bench

// The phases Run runs, each on a cluster of its own. The Go benchmarks
// call them too, with b.N as the amount of work.

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/internal/probe"
)

const (
	benchWorkers = 4 // concurrent producers, and concurrent raft appliers
	benchWarmup  = 5 // untimed batches per worker before measuring
	benchTopic   = "bench"
	// benchWait bounds every wait of a phase for the cluster (a leader, a
	// stable group, a drained log).
	benchWait = time.Minute
)

// Rate is the outcome of one timed phase.
type Rate struct {
	Messages int
	Batches  int // requests or raft entries; 0 where a phase has none of its own
	Elapsed  time.Duration
	CPU      time.Duration // the process's CPU time (user+system) meanwhile; 0 where unknown
}

// MsgsPerSec is the phase's throughput in messages.
func (r Rate) MsgsPerSec() float64 { return float64(r.Messages) / r.Elapsed.Seconds() }

// MBPerSec counts value bytes only (1 MB = 10^6 bytes, as go test's MB/s).
func (r Rate) MBPerSec() float64 {
	return float64(r.Messages) * ValueBytes / 1e6 / r.Elapsed.Seconds()
}

// Cores is the average number of CPUs busy during the phase.
func (r Rate) Cores() float64 { return r.CPU.Seconds() / r.Elapsed.Seconds() }

// CPUPerBatch is the process's CPU time per batch, in microseconds: on a
// machine shared with other work, throughput swings with the load and CPU
// per batch is the steadier figure.
func (r Rate) CPUPerBatch() float64 {
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
func runWorkers(ctx context.Context, total int, do func(w, k int) error, finish func() error) (Rate, error) {
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
		return Rate{}, err
	}
	if finish != nil {
		if err := finish(); err != nil {
			return Rate{}, err
		}
	}
	return Rate{Messages: total * Batch, Batches: total, Elapsed: time.Since(start), CPU: processCPU() - cpu0}, nil
}

// benchValues returns Batch distinct values of ValueBytes bytes.
func benchValues(seed int) [][]byte {
	vals := make([][]byte, Batch)
	for i := range vals {
		v := make([]byte, ValueBytes)
		for j := range v {
			v[j] = byte('a' + (seed+i+j)%26)
		}
		vals[i] = v
	}
	return vals
}

// ProduceBench is one produce phase.
type ProduceBench struct {
	Acks       broker.Acks
	Idempotent bool // needs AcksAll
	Partitions int
	Batches    int // produce requests timed, of Batch messages each
}

// Produce starts a cluster of Nodes with one topic of
// pb.Partitions partitions (RF 3, leaders spread by CreateTopic), gives
// each of benchWorkers goroutines its own producer with BatchSize
// Batch, and times pb.Batches produce requests of Batch pinned
// messages each; worker w sends its k-th batch to partition (w+k) mod
// partitions. With acks=0 nobody waits for the broker, so the phase ends
// only when everything sent is committed. It also returns the size of a
// produce entry in the leader's raft log, to check the raw-raft side
// applies entries of the same size.
//
// The topic's segments are Kafka's default size (segmentBytes), and it has
// no retention, so without files every message stays in memory on every
// replica, and each raft snapshot (every SnapshotThreshold entries)
// serialises the whole log: the longer the run, the lower the rate.
func Produce(ctx context.Context, pb ProduceBench) (Rate, int, error) {
	c, err := broker.NewCluster(clusterConfig())
	if err != nil {
		return Rate{}, 0, fmt.Errorf("start cluster: %w", err)
	}
	defer c.Close()
	wctx, cancel := context.WithTimeout(ctx, benchWait)
	defer cancel()
	if err := c.CreateTopic(wctx, broker.TopicConfig{Name: benchTopic, Partitions: pb.Partitions, RF: Nodes, SegmentBytes: segmentBytes()}); err != nil {
		return Rate{}, 0, err
	}
	producers := make([]*broker.Producer, benchWorkers)
	msgs := make([][]broker.Message, benchWorkers)
	for w := range producers {
		producers[w], err = c.NewProducer(wctx, broker.ProducerConfig{
			ClientID:   fmt.Sprintf("bench-producer-%d", w),
			Acks:       pb.Acks,
			Idempotent: pb.Idempotent,
			BatchSize:  Batch,
		})
		if err != nil {
			return Rate{}, 0, err
		}
		msgs[w] = make([]broker.Message, Batch)
		for i, v := range benchValues(w) {
			msgs[w][i] = broker.Message{Topic: benchTopic, Pinned: true, Value: v}
		}
	}
	want := broker.OutcomeAcked
	if pb.Acks == broker.AcksNone {
		want = broker.OutcomeSent
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
		return probe.Poll(wctx, func() bool {
			var changed bool
			committed, changed = drainedMessages(c, pb.Partitions, terms)
			return committed >= int64(sent*Batch) || changed && committed >= 0
		})
	}
	warm := benchWorkers * max(benchWarmup, pb.Partitions)
	var finish func() error
	if pb.Acks == broker.AcksNone {
		finish = drained
	}
	sent += warm
	terms = leaderTerms(c, pb.Partitions)
	if _, err := runWorkers(ctx, warm, send, finish); err != nil {
		return Rate{}, 0, fmt.Errorf("warm-up: %w", err)
	}
	before := committed
	terms = leaderTerms(c, pb.Partitions)
	sent += pb.Batches
	r, err := runWorkers(ctx, pb.Batches, send, finish)
	if err != nil {
		return Rate{}, 0, err
	}
	if pb.Acks == broker.AcksNone {
		r.Messages = int(committed - before)
	}
	return r, lastProduceEntrySize(c, broker.TopicPartition{Topic: benchTopic, Partition: 0}), nil
}

// leaderTerms is the raft term of each bench partition's leader, 0 where
// there is none.
func leaderTerms(c *broker.Cluster, partitions int) []uint64 {
	terms := make([]uint64, partitions)
	for p := range partitions {
		if lead := probe.Of(c).LeaderOf(broker.TopicPartition{Topic: benchTopic, Partition: p}.String()); lead != nil {
			terms[p] = lead.Raft().CurrentTerm()
		}
	}
	return terms
}

// drainedMessages adds up the bench partitions' committed messages as
// their leaders see them. changed reports that some leader is not of its
// term in terms; then the sum is -1 unless every leader has committed all
// it holds. The sum is -1 too while a partition has no leader.
func drainedMessages(c *broker.Cluster, partitions int, terms []uint64) (sum int64, changed bool) {
	idle := true
	for p := range partitions {
		lead := probe.Of(c).LeaderOf(broker.TopicPartition{Topic: benchTopic, Partition: p}.String())
		if lead == nil {
			return -1, true
		}
		if lead.Raft().CurrentTerm() != terms[p] {
			changed = true
		}
		_, hwm, _ := lead.Offsets()
		if lead.LogEnd() != hwm {
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
func lastProduceEntrySize(c *broker.Cluster, tp broker.TopicPartition) int {
	lead := probe.Of(c).LeaderOf(tp.String())
	if lead == nil {
		return 0
	}
	return lead.LastProduceEntrySize()
}
