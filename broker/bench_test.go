//go:build unix

package broker

// Benchmarks for the project's performance targets. They run only with
// -bench (and only on unix: they read the process's CPU time), e.g.
//
//	go test -run '^$' -bench 'ProduceVsRaft|Failover' -benchtime=3000x -count=6 ./broker/
//
// BenchmarkProduce        the broker's acks=all produce throughput
// BenchmarkProduceVsRaft  the same next to bare raft.Apply on the same
//                         cluster shape, in one run; target ratio ≥ 0.5
// BenchmarkFailover       leader killed → next acknowledged write, in
//                         election timeouts; target median ≤ 3
//
// In the throughput benchmarks one op is one batch of benchBatch records
// (one produce request, one raft entry), so -benchtime=Nx fixes the work.
// Besides msgs/s and MB/s (value bytes) they report the process's CPU time
// per batch: on a machine shared with other work, throughput swings with
// the load and CPU per batch is the steadier figure. The broker's rate
// falls as its partition log grows (see measureBroker), so compare runs
// with the same -benchtime.

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
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/partlog"
	"github.com/mqlab/mqlab/broker/raftnet"
)

const (
	benchNodes   = 3
	benchBatch   = 100 // records per produce request, and per raft entry
	benchValue   = 100 // bytes per record value
	benchWorkers = 4   // concurrent producers, and concurrent raft appliers
	benchWarmup  = 5   // untimed batches per worker before measuring
	benchTopic   = "bench"
	failoverKill = 20 // kills per failover series
	// rawMinBatches is the least work the raw-raft side is timed over: it
	// runs about ten times faster than the broker, and a phase of a few
	// tens of milliseconds would be mostly noise. Its state does not grow
	// (the FSM counts, the log is compacted), so a longer run measures the
	// same steady state, snapshots and compactions included.
	rawMinBatches = 20000
)

// rate is the outcome of one timed phase.
type rate struct {
	batches int
	elapsed time.Duration
	cpu     time.Duration // process CPU time (user+system) during the phase
}

func (r rate) msgsPerSec() float64 {
	return float64(r.batches*benchBatch) / r.elapsed.Seconds()
}

// cores is the average number of CPUs busy during the phase.
func (r rate) cores() float64 { return r.cpu.Seconds() / r.elapsed.Seconds() }

// cpuPerBatch is the process CPU time per batch, in microseconds.
func (r rate) cpuPerBatch() float64 {
	return float64(r.cpu.Microseconds()) / float64(r.batches)
}

// mbPerSec counts value bytes only (1 MB = 1e6 bytes, as go test's MB/s),
// the same payload on both sides.
func (r rate) mbPerSec() float64 {
	return float64(r.batches*benchBatch*benchValue) / 1e6 / r.elapsed.Seconds()
}

// firstErr keeps the first error a worker goroutine hit; b.Fatal may only be
// called from the benchmark's own goroutine.
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
// them; worker w sends its k-th batch with do(w, k). It returns the wall
// time from start to the last answer and the CPU time the process used
// meanwhile; when timed, the benchmark timer runs only for that span.
func runWorkers(b *testing.B, total int, timed bool, do func(w, k int) error) (rate, error) {
	var next atomic.Int64
	var ferr firstErr
	var wg sync.WaitGroup
	runtime.GC() // neither side pays for the garbage of setup or of the other side
	if timed {
		b.StartTimer()
	}
	cpu0 := processCPU()
	start := time.Now()
	for w := range benchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; next.Add(1) <= int64(total); k++ {
				if err := do(w, k); err != nil {
					ferr.set(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := processCPU() - cpu0
	if timed {
		b.StopTimer()
	}
	return rate{batches: total, elapsed: elapsed, cpu: cpu}, ferr.get()
}

// processCPU is the user plus system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchValues returns benchBatch distinct values of benchValue bytes.
func benchValues(seed int) [][]byte {
	vals := make([][]byte, benchBatch)
	for i := range vals {
		v := make([]byte, benchValue)
		for j := range v {
			v[j] = byte('a' + (seed+i+j)%26)
		}
		vals[i] = v
	}
	return vals
}

// measureBroker starts a 3-node FastTiming cluster with one topic of
// partitions partitions (RF 3, leaders spread by CreateTopic), gives each of
// benchWorkers goroutines its own acks=all producer with BatchSize
// benchBatch, and times batches produce requests of benchBatch pinned
// records each; worker w sends its k-th batch to partition (w+k) mod
// partitions. The cluster is closed before it returns. It also returns the
// size of a produce entry in the leader's raft log, to check the raw-raft
// side applies entries of the same size.
//
// The topic has the lab's defaults (16-record segments, no retention), so
// every record stays in memory on every replica, and each raft snapshot
// (every SnapshotThreshold entries) serialises the whole log: the longer
// the run, the lower the rate.
func measureBroker(b *testing.B, partitions, batches int, idempotent bool) (rate, int) {
	b.Helper()
	c, err := NewCluster(Config{Nodes: benchNodes})
	if err != nil {
		b.Fatalf("start cluster: %v", err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	mustCreate(b, c, TopicConfig{Name: benchTopic, Partitions: partitions, RF: benchNodes})

	producers := make([]*Producer, benchWorkers)
	msgs := make([][]Message, benchWorkers)
	for w := range producers {
		producers[w] = mustProducer(b, c, ProducerConfig{
			ClientID:   fmt.Sprintf("bench-producer-%d", w),
			Acks:       AcksAll,
			Idempotent: idempotent,
			BatchSize:  benchBatch,
		})
		msgs[w] = make([]Message, benchBatch)
		for i, v := range benchValues(w) {
			msgs[w][i] = Message{Topic: benchTopic, Pinned: true, Value: v}
		}
	}
	send := func(w, k int) error {
		part := (w + k) % partitions
		ms := msgs[w]
		for i := range ms {
			ms[i].Partition = part
		}
		for i, r := range producers[w].Produce(ctx, ms...) {
			if r.Outcome != OutcomeAcked {
				return fmt.Errorf("producer %d, batch %d, message %d: %v: %w", w, k, i, r.Outcome, r.Err)
			}
		}
		return nil
	}
	if _, err := runWorkers(b, benchWorkers*max(benchWarmup, partitions), false, send); err != nil {
		b.Fatalf("warm-up: %v", err)
	}
	r, err := runWorkers(b, batches, true, send)
	if err != nil {
		b.Fatalf("produce: %v", err)
	}
	return r, lastProduceEntrySize(c, TopicPartition{benchTopic, 0})
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

// rawEntry encodes one batch the way a partition leader does: benchBatch
// records of benchValue bytes, stamped with the leader's clock, with a
// producer id and sequence when idempotent.
func rawEntry(idempotent bool) []byte {
	now := time.Now().UnixNano()
	batch := partlog.Batch{Records: make([]partlog.Record, benchBatch)}
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

// rawCluster is groups bare raft groups of benchNodes members each, on one
// raftnet network, configured exactly like the broker's replicas.
type rawCluster struct {
	groups [][]*raft.Raft
}

func startRawCluster(b *testing.B, groups int) *rawCluster {
	b.Helper()
	timing := FastTiming
	// The broker's own raftConfig, so the two sides cannot drift apart.
	confSrc := &Cluster{timing: timing, logger: hclog.NewNullLogger()}
	net := raftnet.New(raftnet.Options{RPCTimeout: timing.RPCTimeout})
	rc := &rawCluster{}
	for g := range groups {
		group := fmt.Sprintf("raw/%d", g)
		var servers []raft.Server
		for i := 1; i <= benchNodes; i++ {
			id := fmt.Sprintf("n%d", i)
			servers = append(servers, raft.Server{ID: raft.ServerID(id), Address: raftnet.Addr(id, group)})
		}
		var members []*raft.Raft
		for _, s := range servers {
			node := string(s.ID)
			trans, err := net.Transport(node, group)
			if err != nil {
				rc.shutdown()
				b.Fatal(err)
			}
			conf := confSrc.raftConfig(node)
			logs, stable, snaps := raft.NewInmemStore(), raft.NewInmemStore(), raft.NewInmemSnapshotStore()
			if err := raft.BootstrapCluster(conf, logs, stable, snaps, trans, raft.Configuration{Servers: servers}); err != nil {
				trans.Close()
				rc.shutdown()
				b.Fatal(err)
			}
			r, err := raft.NewRaft(conf, &countFSM{}, logs, stable, snaps, trans)
			if err != nil {
				trans.Close()
				rc.shutdown()
				b.Fatal(err)
			}
			members = append(members, r)
		}
		rc.groups = append(rc.groups, members)
	}
	return rc
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

// measureRaft times batches raft.Apply calls of entry on a raw cluster of
// groups groups, from benchWorkers goroutines that each wait for an apply's
// future before the next, as the broker's producers wait for their acks;
// worker w applies its k-th entry to group (w+k) mod groups. A worker that
// finds the leader gone looks for the new one and applies again, as the
// broker's producer would retry.
func measureRaft(b *testing.B, groups, batches int, entry []byte) (rate, int) {
	b.Helper()
	rc := startRawCluster(b, groups)
	defer rc.shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	leaders := make([]atomic.Pointer[raft.Raft], groups)
	for g := range groups {
		lead, err := rc.leader(ctx, g)
		if err != nil {
			b.Fatalf("raw raft group %d: no leader: %v", g, err)
		}
		if err := lead.Barrier(FastTiming.RequestTimeout).Error(); err != nil {
			b.Fatalf("raw raft group %d: barrier: %v", g, err)
		}
		leaders[g].Store(lead)
	}
	var retries atomic.Int64
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
			retries.Add(1)
			lead, lerr := rc.leader(ctx, g)
			if lerr != nil {
				return fmt.Errorf("group %d: %v; then no leader: %w", g, err, lerr)
			}
			leaders[g].Store(lead)
		}
	}
	if _, err := runWorkers(b, benchWorkers*max(benchWarmup, groups), false, apply); err != nil {
		b.Fatalf("raw raft warm-up: %v", err)
	}
	r, err := runWorkers(b, batches, true, apply)
	if err != nil {
		b.Fatalf("raw raft: %v", err)
	}
	if n := retries.Load(); n > 0 {
		b.Logf("raw raft: %d applies retried after a leader change", n)
	}
	return r, len(entry)
}

// BenchmarkProduce is the broker's produce throughput: acks=all, 3 nodes,
// RF 3, 100-byte values, batches of 100, 4 concurrent producers each with
// its own producer client. One op is one batch of 100 messages.
func BenchmarkProduce(b *testing.B) {
	for _, bc := range []struct {
		partitions int
		idempotent bool
	}{{1, true}, {1, false}, {3, true}} {
		b.Run(fmt.Sprintf("partitions=%d/idempotent=%v", bc.partitions, bc.idempotent), func(b *testing.B) {
			b.StopTimer()
			r, _ := measureBroker(b, bc.partitions, b.N, bc.idempotent)
			b.ReportMetric(r.msgsPerSec(), "msgs/s")
			b.ReportMetric(r.mbPerSec(), "MB/s")
			b.ReportMetric(r.cpuPerBatch(), "cpu-us/batch")
		})
	}
}

// BenchmarkProduceVsRaft runs BenchmarkProduce's workload (idempotent
// producers) and then the same workload as bare raft.Apply calls on the
// same cluster shape, and reports both rates and their ratio (broker/raw;
// the target is ≥ 0.5). Each side runs alone: the broker's cluster is
// closed before the raw raft groups start. The broker side sends b.N
// batches; the raw side applies max(b.N, rawMinBatches) entries. ns/op
// covers both timed phases together and means little; read the metrics.
func BenchmarkProduceVsRaft(b *testing.B) {
	for _, partitions := range []int{1, 3} {
		b.Run(fmt.Sprintf("partitions=%d", partitions), func(b *testing.B) {
			b.StopTimer()
			br, brokerEntry := measureBroker(b, partitions, b.N, true)
			rr, rawEntryLen := measureRaft(b, partitions, max(b.N, rawMinBatches), rawEntry(true))
			if b.N >= 100 {
				b.Logf("broker %d batches, raw raft %d entries; raft entry bytes: broker %d, raw %d", br.batches, rr.batches, brokerEntry, rawEntryLen)
				b.Logf("broker:   %.0f msgs/s, %v wall, %v CPU (%.2f cores, %.0f µs CPU/batch)",
					br.msgsPerSec(), br.elapsed.Round(time.Millisecond), br.cpu.Round(time.Millisecond), br.cores(), br.cpuPerBatch())
				b.Logf("raw raft: %.0f msgs/s, %v wall, %v CPU (%.2f cores, %.0f µs CPU/batch)",
					rr.msgsPerSec(), rr.elapsed.Round(time.Millisecond), rr.cpu.Round(time.Millisecond), rr.cores(), rr.cpuPerBatch())
			}
			b.ReportMetric(br.msgsPerSec(), "broker-msgs/s")
			b.ReportMetric(br.mbPerSec(), "broker-MB/s")
			b.ReportMetric(rr.msgsPerSec(), "raft-msgs/s")
			b.ReportMetric(rr.mbPerSec(), "raft-MB/s")
			b.ReportMetric(br.msgsPerSec()/rr.msgsPerSec(), "ratio")
			b.ReportMetric(br.cpuPerBatch(), "broker-cpu-us/batch")
			b.ReportMetric(rr.cpuPerBatch(), "raft-cpu-us/batch")
		})
	}
}

// BenchmarkFailover kills the partition leader failoverKill times and
// measures, in election timeouts, from just before the kill until an
// acks=all write of an idempotent producer is acknowledged by the new
// leader. After each kill the node is restarted and the partition must
// converge before the next one. The series is the same whatever b.N, so
// one command can give the throughput benchmarks -benchtime=Nx; ns/op is
// the mean time from kill to acknowledged write.
//
// The backoff=5ms case keeps the client's retry backoff (here a twentieth
// of an election timeout, fixed) from dominating the measurement;
// backoff=default uses the producer's defaults (a tenth of a heartbeat
// timeout, doubling up to one).
func BenchmarkFailover(b *testing.B) {
	for _, bc := range []struct {
		name            string
		backoff, capped time.Duration
	}{
		{"backoff=5ms", 5 * time.Millisecond, 5 * time.Millisecond},
		{"backoff=default", 0, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.StopTimer()
			c, err := NewCluster(Config{Nodes: benchNodes})
			if err != nil {
				b.Fatalf("start cluster: %v", err)
			}
			defer c.Close()
			tp := TopicPartition{"failover", 0}
			mustCreate(b, c, TopicConfig{Name: tp.Topic, Partitions: 1, RF: benchNodes})
			p := mustProducer(b, c, ProducerConfig{ClientID: "bench-failover", Acks: AcksAll, Idempotent: true,
				RetryBackoff: bc.backoff, RetryBackoffMax: bc.capped})
			et := c.Timing().ElectionTimeout
			var samples []float64
			var kills []time.Duration
			var total time.Duration
			for i := range failoverKill {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				leader, err := c.WaitForLeader(ctx, tp)
				if err != nil {
					cancel()
					b.Fatalf("kill %d: %v", i, err)
				}
				m := Message{Topic: tp.Topic, Value: []byte(fmt.Sprintf("before kill %d", i))}
				before := p.Produce(ctx, m)[0]
				if before.Outcome != OutcomeAcked {
					cancel()
					b.Fatalf("kill %d: write before the kill: %v %v", i, before.Outcome, before.Err)
				}

				b.StartTimer()
				start := time.Now()
				if err := c.Kill(leader); err != nil {
					cancel()
					b.Fatalf("kill %d: %v", i, err)
				}
				killed := time.Since(start)
				m.Value = []byte(fmt.Sprintf("after kill %d", i))
				after := p.Produce(ctx, m)[0]
				took := time.Since(start)
				b.StopTimer()

				if after.Outcome != OutcomeAcked || after.Epoch <= before.Epoch {
					cancel()
					b.Fatalf("kill %d: write after killing %s: %v at epoch %d (before: %d), %d attempts: %v",
						i, leader, after.Outcome, after.Epoch, before.Epoch, after.Attempts, after.Err)
				}
				samples = append(samples, float64(took)/float64(et))
				total += took
				kills = append(kills, killed)
				if err := c.Restart(leader); err != nil {
					cancel()
					b.Fatalf("kill %d: restart %s: %v", i, leader, err)
				}
				err = poll(ctx, func() bool { return benchConverged(c, tp) })
				cancel()
				if err != nil {
					b.Fatalf("kill %d: replicas did not converge after restarting %s: %v", i, leader, err)
				}
			}
			slices.Sort(samples)
			slices.Sort(kills)
			n := len(samples)
			median := (samples[(n-1)/2] + samples[n/2]) / 2
			b.Logf("%d kills, election timeout %v: failover in ETs min %.2f, median %.2f, p90 %.2f, max %.2f; Kill itself took median %v, max %v",
				n, et, samples[0], median, samples[n*9/10], samples[n-1], kills[n/2], kills[n-1])
			b.ReportMetric(float64(total.Nanoseconds())/float64(n), "ns/op")
			b.ReportMetric(samples[0], "min-ET")
			b.ReportMetric(median, "median-ET")
			b.ReportMetric(samples[n-1], "max-ET")
		})
	}
}

// benchConverged reports whether every replica of tp is up and has written
// and committed exactly what the others have, under a leader ready to
// serve.
func benchConverged(c *Cluster, tp TopicPartition) bool {
	lead := c.leaderOf(tp.String())
	if lead == nil || !lead.readyLeader() {
		return false
	}
	p := partitionState(c.SnapshotWindow(0), tp)
	if len(p.Replicas) != benchNodes {
		return false
	}
	for _, r := range p.Replicas {
		if !r.Up || r.Role == "candidate" || r.LogEnd != r.HighWatermark || r.HighWatermark != p.Replicas[0].HighWatermark {
			return false
		}
	}
	return true
}
