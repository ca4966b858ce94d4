package bench

// Benchmarks for the project's performance targets. They run the phases
// of Run (benchmark_phases.go, benchmark_memory.go), the code `mqlab
// bench` prints its report from, e.g.
//
//	go test -run '^$' -bench 'ProduceVsRaft|Failover' -benchtime=3000x -count=6 ./broker/bench/
//	go test -run '^$' -bench RetainedMemory -benchtime=1x ./broker/bench/
//
// BenchmarkProduce         the broker's produce throughput, acks 0, 1, all
// BenchmarkProduceVsRaft   acks=all next to bare raft.Apply on the same
//                          cluster shape, in one run; target ratio ≥ 0.6
// BenchmarkFailover        leader killed → next acknowledged write, in
//                          election timeouts; target median ≤ 3
// BenchmarkRetainedMemory  peak RSS with 1,000,000 retained messages at
//                          RF 3, the replicas writing segment files;
//                          target ≤ 100 MB
// BenchmarkCatchUpMemory   peak RSS while a follower that missed them
//                          catches up by snapshot
// BenchmarkStart           a cluster's start to its first acknowledged
//                          records, without and with segment files;
//                          target: files add under 50 ms
//
// In the throughput benchmarks one op is one batch of Batch records
// (one produce request, one raft entry), so -benchtime=Nx fixes the work,
// and ns/op is the broker's wall time per batch. Besides msgs/s and MB/s
// (value bytes) they report the process's CPU time per batch: on a machine
// shared with other work, throughput swings with the load and CPU per
// batch is the steadier figure. The broker's rate falls as its partition
// log grows (see Produce), so compare runs with the same -benchtime.

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker"
)

func benchCtx(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	b.Cleanup(cancel)
	return ctx
}

// reportRate reports a phase's throughput, with prefix before each unit.
func reportRate(b *testing.B, prefix string, r Rate) {
	b.ReportMetric(r.MsgsPerSec(), prefix+"msgs/s")
	b.ReportMetric(r.MBPerSec(), prefix+"MB/s")
	if r.CPU > 0 {
		b.ReportMetric(r.CPUPerBatch(), prefix+"cpu-us/batch")
	}
}

// BenchmarkProduce is the broker's produce throughput: 3 nodes, RF 3,
// 100-byte values, batches of 100, 4 concurrent producers each with its
// own producer client. One op is one batch of 100 messages.
func BenchmarkProduce(b *testing.B) {
	for _, pb := range []ProduceBench{
		{Acks: broker.AcksNone, Partitions: 1},
		{Acks: broker.AcksLeader, Partitions: 1},
		{Acks: broker.AcksAll, Partitions: 1},
		{Acks: broker.AcksAll, Partitions: 1, Idempotent: true},
		{Acks: broker.AcksAll, Partitions: 3, Idempotent: true},
	} {
		b.Run(fmt.Sprintf("acks=%s/partitions=%d/idempotent=%v", pb.Acks, pb.Partitions, pb.Idempotent), func(b *testing.B) {
			b.StopTimer()
			pb.Batches = b.N
			r, _, err := Produce(benchCtx(b), pb)
			if err != nil {
				b.Fatal(err)
			}
			reportRate(b, "", r)
			b.ReportMetric(float64(r.Elapsed.Nanoseconds())/float64(b.N), "ns/op")
		})
	}
}

// BenchmarkProduceVsRaft runs BenchmarkProduce's acks=all workload
// (idempotent producers) and then the same workload as bare raft.Apply
// calls on the same cluster shape, and reports both rates and their ratio
// (broker/raw; the target is TargetRatio). Each side runs alone: the broker's
// cluster is closed before the raw raft groups start. The broker side
// sends b.N batches; the raw side applies max(b.N, 20000) entries (see
// Config.RawBatches), once with one buffer for every apply and once with
// a new copy of it each time (ratio-fresh: the broker against raft that
// is handed new bytes, as a broker is).
//
// With files=true every broker replica writes its segment files, as a
// lab's do, to a temporary folder, and raw raft runs once more with each
// member writing the entries it applies to files that roll at the same
// size (RawRaftFiles; ratio-files: the broker against raft and the disk
// alone). The topic's segments roll at 1 MiB:
// closed segments then live in their files, raft lets go of the entries
// behind its snapshots, and the heap stops growing with the log. Without
// files the whole log stays in memory, and on a machine where touching a
// fresh page of memory is slow (a small virtual machine), that growth
// alone can cost the broker side tens of µs a batch.
func BenchmarkProduceVsRaft(b *testing.B) {
	for _, c := range []struct {
		partitions int
		files      bool
	}{{1, false}, {3, false}, {1, true}, {3, true}} {
		partitions := c.partitions
		b.Run(fmt.Sprintf("partitions=%d/files=%v", partitions, c.files), func(b *testing.B) {
			b.StopTimer()
			if c.files {
				filesRoot = b.TempDir()
				defer func() { filesRoot = "" }()
			}
			ctx := benchCtx(b)
			br, brokerEntry, err := Produce(ctx, ProduceBench{Acks: broker.AcksAll, Idempotent: true, Partitions: partitions, Batches: b.N})
			if err != nil {
				b.Fatalf("broker: %v", err)
			}
			entry := RawProduceEntry(true)
			rawBatches := Config{Batches: b.N}.withDefaults().RawBatches
			rr, err := RawRaft(ctx, partitions, rawBatches, entry)
			if err != nil {
				b.Fatalf("raw raft: %v", err)
			}
			fr, err := RawRaftFresh(ctx, partitions, rawBatches, entry)
			if err != nil {
				b.Fatalf("raw raft, fresh entries: %v", err)
			}
			var rf Rate
			if c.files {
				if rf, err = RawRaftFiles(ctx, partitions, rawBatches, entry, b.TempDir()); err != nil {
					b.Fatalf("raw raft writing files: %v", err)
				}
			}
			if b.N >= 100 {
				b.Logf("%d cores, load %s; broker %d batches to a topic with segment.bytes %d, raw raft %d entries; raft entry bytes: broker %d, raw %d",
					runtime.NumCPU(), LoadAverage(), br.Batches, segmentBytes(), rr.Batches, brokerEntry, len(entry))
				for _, side := range []struct {
					name string
					r    Rate
				}{{"broker:  ", br}, {"raw raft:", rr}, {"raw raft, a new copy of the entry each apply:", fr}, {"raw raft, a new copy each apply, written to files:", rf}} {
					if side.r.Messages == 0 {
						continue
					}
					b.Logf("%s %.0f msgs/s, %v wall, %v CPU (%.2f cores, %.0f µs CPU/batch)", side.name,
						side.r.MsgsPerSec(), side.r.Elapsed.Round(time.Millisecond), side.r.CPU.Round(time.Millisecond), side.r.Cores(), side.r.CPUPerBatch())
				}
			}
			reportRate(b, "broker-", br)
			reportRate(b, "raft-", rr)
			b.ReportMetric(br.MsgsPerSec()/rr.MsgsPerSec(), "ratio")
			b.ReportMetric(br.MsgsPerSec()/fr.MsgsPerSec(), "ratio-fresh")
			if c.files {
				b.ReportMetric(br.MsgsPerSec()/rf.MsgsPerSec(), "ratio-files")
			}
			b.ReportMetric(float64(br.Elapsed.Nanoseconds())/float64(b.N), "ns/op")
		})
	}
}

// BenchmarkFailover runs a series of 20 leader kills (see Failover),
// the same whatever b.N, so one command can give the throughput benchmarks
// -benchtime=Nx; ns/op is the mean time from kill to acknowledged write.
//
// The backoff=5ms case keeps the client's retry backoff (here a twentieth
// of an election timeout, fixed) from dominating the measurement;
// backoff=default uses the producer's defaults (a tenth of a heartbeat
// timeout, doubling up to one).
func BenchmarkFailover(b *testing.B) {
	for _, bc := range []struct {
		name    string
		backoff time.Duration
	}{
		{"backoff=5ms", fastRetry},
		{"backoff=default", 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			// The timer runs: a series takes seconds, more than the default
			// -benchtime, so the framework does not ask for another.
			f, err := Failover(benchCtx(b), Config{}.withDefaults().Kills, bc.backoff, nil)
			if err != nil {
				b.Fatal(err)
			}
			kills := slices.Clone(f.Kills)
			slices.Sort(kills)
			b.Logf("%d kills, election timeout %v: failover in ETs min %.2f, median %.2f, p90 %.2f, max %.2f; Kill itself took median %v, max %v",
				len(f.ET), f.Timeout, f.Min(), f.Median(), f.P90(), f.Max(), kills[len(kills)/2], kills[len(kills)-1])
			b.ReportMetric(float64(f.Mean().Nanoseconds()), "ns/op")
			b.ReportMetric(f.Min(), "min-ET")
			b.ReportMetric(f.Median(), "median-ET")
			b.ReportMetric(f.Max(), "max-ET")
		})
	}
}

// BenchmarkRetainedMemory reads the process's peak resident memory while
// a cluster holds 1,000,000 messages of 100 bytes at RF 3 (see
// Retained). One op is one such cluster, loaded, snapshotted and
// closed; the reported peak is the highest of the ops. Run it with
// -benchtime=1x; where the kernel's peak cannot be reset, run it alone.
func BenchmarkRetainedMemory(b *testing.B) {
	var peak int64
	for range b.N {
		m, err := Retained(benchCtx(b), Config{}.withDefaults().Retained, 1)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s %s (%s) with %d retained messages, loaded in %v", m.Label(), formatBytes(float64(m.PeakBytes)), m.Source(), m.Retained, m.Load.Round(time.Millisecond))
		peak = max(peak, m.PeakBytes)
	}
	b.ReportMetric(float64(peak)/1e6, "peak-MB")
}

// BenchmarkCatchUpMemory reads the process's peak resident memory while a
// follower that missed 1,000,000 messages of 100 bytes catches up by
// installing a snapshot (see CatchUp). Run it with -benchtime=1x.
func BenchmarkCatchUpMemory(b *testing.B) {
	var peak int64
	for range b.N {
		m, err := CatchUp(benchCtx(b), Config{}.withDefaults().Retained)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s %s (%s) while a follower caught up with %d messages, in %v", m.Label(), formatBytes(float64(m.PeakBytes)), m.Source(), m.Retained, m.Load.Round(time.Millisecond))
		peak = max(peak, m.PeakBytes)
	}
	b.ReportMetric(float64(peak)/1e6, "peak-MB")
}

// BenchmarkStart is what a lab pays to start: a 3-node cluster, a topic of
// three partitions at RF 3, and one acknowledged record on each, without
// and with the replicas' segment files (target: the files add under
// 50 ms). ns/op is one start, to the last acknowledgement, and its close.
func BenchmarkStart(b *testing.B) {
	for _, files := range []bool{false, true} {
		b.Run(fmt.Sprintf("files=%v", files), func(b *testing.B) {
			ctx := benchCtx(b)
			root := b.TempDir()
			for i := range b.N {
				cfg := broker.Config{Nodes: Nodes}
				if files {
					cfg.DataDir = filepath.Join(root, fmt.Sprintf("lab-%d", i))
				}
				c, err := broker.NewCluster(cfg)
				if err != nil {
					b.Fatalf("start: %v", err)
				}
				if err := c.CreateTopic(ctx, broker.TopicConfig{Name: benchTopic, Partitions: 3, RF: Nodes}); err != nil {
					b.Fatalf("topic: %v", err)
				}
				p, err := c.NewProducer(ctx, broker.ProducerConfig{ClientID: "start", Acks: broker.AcksAll})
				if err != nil {
					b.Fatalf("producer: %v", err)
				}
				for part := range 3 {
					r := p.Produce(ctx, broker.Message{Topic: benchTopic, Pinned: true, Partition: part, Value: []byte("order 881")})
					if r[0].Outcome != broker.OutcomeAcked {
						b.Fatalf("partition %d: %v: %v", part, r[0].Outcome, r[0].Err)
					}
				}
				c.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/start")
		})
	}
}
