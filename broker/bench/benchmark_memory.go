package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/internal/probe"
)

// MemoryResult is the memory phase: the process's peak resident memory
// while a cluster holds Retained messages at RF 3.
type MemoryResult struct {
	Retained  int
	PeakBytes int64
	// FromKernel: PeakBytes is the kernel's VmHWM of the process. Without
	// /proc/self/status it is the Go runtime's memory, sampled.
	FromKernel bool
	// Reset: the kernel's peak was reset to the current RSS before the
	// phase, so earlier work in the process does not count.
	Reset bool
	Load  time.Duration // producing and replicating every message
}

// Label names the figure: peak RSS, or the fallback's peak memory.
func (m MemoryResult) Label() string {
	if m.FromKernel {
		return "peak RSS"
	}
	return "peak memory"
}

// Source says where the figure comes from.
func (m MemoryResult) Source() string {
	switch {
	case m.FromKernel && m.Reset:
		return "VmHWM"
	case m.FromKernel:
		return "VmHWM, the process's peak since it started: it could not be reset"
	}
	return "no /proc/self/status here: Go runtime memory sampled every 10ms, not RSS"
}

// Retained starts a cluster whose replicas write their segment files, as
// a lab's do, to a temporary folder (under Run's when it has one),
// produces n messages of ValueBytes to a topic of partitions partitions
// (RF 3, segments of 1 MiB, no retention) with benchWorkers acks=all
// producers in batches of Batch, waits until every replica has applied
// all of them, has every replica snapshot its log, and reads the
// process's peak resident memory.
//
// The data lives in the files: a replica keeps a closed segment's
// batches there only, and its snapshot names the files. What stays in
// memory is the indexes, the active segments, and the raft log entries
// not yet let go after a snapshot (raftnet hands followers the leader's
// entries by reference, so the replicas share those bytes).
func Retained(ctx context.Context, n, partitions int) (MemoryResult, error) {
	res := MemoryResult{Retained: n}
	dir, err := os.MkdirTemp(filesRoot, "mqlab-memory-")
	if err != nil {
		return res, fmt.Errorf("a folder for the segment files: %w", err)
	}
	defer os.RemoveAll(dir)
	res.Reset = resetPeakRSS() == nil
	stopSampling := sampleGoMemory()
	sampled := stopSampling // called once below, or on an early return
	defer func() {
		if sampled != nil {
			sampled()
		}
	}()

	c, err := broker.NewCluster(broker.Config{Nodes: Nodes, DataDir: dir})
	if err != nil {
		return res, fmt.Errorf("start cluster: %w", err)
	}
	defer c.Close()
	wctx, cancel := context.WithTimeout(ctx, 10*benchWait)
	defer cancel()
	if err := c.CreateTopic(wctx, broker.TopicConfig{Name: benchTopic, Partitions: partitions, RF: Nodes, SegmentBytes: 1 << 20}); err != nil {
		return res, err
	}
	start := time.Now()
	batches := (n + Batch - 1) / Batch
	var next atomic.Int64
	var ferr firstErr
	var wg sync.WaitGroup
	for w := range benchWorkers {
		// Idempotent, so a batch retried after a leader change under load
		// is not kept twice.
		p, err := c.NewProducer(wctx, broker.ProducerConfig{ClientID: fmt.Sprintf("bench-producer-%d", w), Acks: broker.AcksAll, Idempotent: true, BatchSize: Batch})
		if err != nil {
			return res, err
		}
		msgs := make([]broker.Message, Batch)
		for i, v := range benchValues(w) {
			msgs[i] = broker.Message{Topic: benchTopic, Pinned: true, Value: v}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= batches || ferr.get() != nil {
					return
				}
				ms := msgs[:min(Batch, n-k*Batch)]
				for i := range ms {
					ms[i].Partition = k % partitions
				}
				for _, r := range p.Produce(wctx, ms...) {
					if r.Outcome != broker.OutcomeAcked {
						ferr.set(fmt.Errorf("batch %d: %v: %w", k, r.Outcome, r.Err))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := ferr.get(); err != nil {
		return res, err
	}
	var held int64
	if err := probe.Poll(wctx, func() bool {
		held = replicasAgree(c, partitions)
		return held >= int64(n)
	}); err != nil {
		return res, fmt.Errorf("not every replica applied all %d messages: %w", n, err)
	}
	res.Retained = int(held)
	res.Load = time.Since(start)
	// Raft snapshots a replica every few hundred entries; take a
	// snapshot of every replica now, so the peak includes one of the
	// whole log whatever the timing of the automatic ones.
	for p := range partitions {
		for _, node := range c.Nodes() {
			rep := probe.Of(c).ReplicaOn(node, broker.TopicPartition{Topic: benchTopic, Partition: p}.String())
			if rep == nil {
				return res, fmt.Errorf("%s lost its replica of %s/%d", node, benchTopic, p)
			}
			if err := rep.Raft().Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
				return res, fmt.Errorf("snapshot %s/%d on %s: %w", benchTopic, p, node, err)
			}
		}
	}
	goPeak := stopSampling()
	sampled = nil
	if hwm, err := readVmHWM(); err == nil {
		res.PeakBytes, res.FromKernel = hwm, true
	} else {
		res.PeakBytes = goPeak
	}
	return res, nil
}

// replicasAgree returns the messages of the bench topic each node holds
// when every node's replica of every partition has applied as many as
// the others, or -1. It reads each state machine's offsets and nothing
// else: a Snapshot copies every segment of every replica, tens of
// thousands of them here, and polling it would load the machine whose
// memory is being measured.
func replicasAgree(c *broker.Cluster, partitions int) int64 {
	var total int64
	for p := range partitions {
		group := broker.TopicPartition{Topic: benchTopic, Partition: p}.String()
		held := int64(-1)
		for _, node := range c.Nodes() {
			rep := probe.Of(c).ReplicaOn(node, group)
			if rep == nil {
				return -1
			}
			start, hwm, ok := rep.Offsets()
			if !ok {
				return -1
			}
			if held >= 0 && hwm-start != held {
				return -1
			}
			held = hwm - start
		}
		total += held
	}
	return total
}

// resetPeakRSS sets the kernel's peak resident memory of the process back
// to its current RSS (Linux 4.0 and later).
func resetPeakRSS() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// readVmHWM reads the process's peak resident memory, in bytes, from
// /proc/self/status.
func readVmHWM() (int64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmHWM:"))
		if !ok {
			continue
		}
		kb, ok := bytes.CutSuffix(bytes.TrimSpace(rest), []byte(" kB"))
		if !ok {
			return 0, fmt.Errorf("VmHWM: unexpected unit in %q", sc.Text())
		}
		v, err := strconv.ParseInt(string(bytes.TrimSpace(kb)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmHWM: %w", err)
		}
		return v * 1024, nil
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

// sampleGoMemory samples the memory the Go runtime holds from the system
// (mapped, not returned) every 10ms until the returned function is called;
// that function returns the highest sample.
func sampleGoMemory() func() int64 {
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	read := func() int64 {
		metrics.Read(samples)
		var v [2]int64
		for i, s := range samples {
			if s.Value.Kind() == metrics.KindUint64 {
				v[i] = int64(s.Value.Uint64())
			}
		}
		return v[0] - v[1]
	}
	stop := make(chan struct{})
	done := make(chan int64)
	go func() {
		peak := read()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				done <- max(peak, read())
				return
			case <-t.C:
				peak = max(peak, read())
			}
		}
	}()
	return func() int64 {
		close(stop)
		return <-done
	}
}

// CatchUp measures the peak resident memory while a follower that was
// down for n messages of ValueBytes (one partition, RF 3, segment files
// of 1 MiB, batches of Batch) comes back and catches up. The leader has
// long since let go of the raft entries it missed, so it catches up by
// installing a snapshot of the whole log: what the transport, its
// snapshot store and its restore hold of that is what this measures.
func CatchUp(ctx context.Context, n int) (MemoryResult, error) {
	res := MemoryResult{Retained: n}
	dir, err := os.MkdirTemp(filesRoot, "mqlab-catch-up-")
	if err != nil {
		return res, fmt.Errorf("a folder for the segment files: %w", err)
	}
	defer os.RemoveAll(dir)
	c, err := broker.NewCluster(broker.Config{Nodes: Nodes, DataDir: dir})
	if err != nil {
		return res, fmt.Errorf("start cluster: %w", err)
	}
	defer c.Close()
	wctx, cancel := context.WithTimeout(ctx, 10*benchWait)
	defer cancel()
	tp := broker.TopicPartition{Topic: benchTopic, Partition: 0}
	if err := c.CreateTopic(wctx, broker.TopicConfig{Name: benchTopic, Partitions: 1, RF: Nodes, SegmentBytes: 1 << 20}); err != nil {
		return res, err
	}
	if err := c.TransferLeadership(wctx, tp, "n1"); err != nil {
		return res, err
	}
	n3 := probe.Of(c).ReplicaOn("n3", tp.String())
	if n3 == nil {
		return res, fmt.Errorf("n3 holds no replica of %s", tp)
	}
	missedFrom := n3.Raft().LastIndex()
	if err := c.Kill("n3"); err != nil {
		return res, err
	}
	p, err := c.NewProducer(wctx, broker.ProducerConfig{ClientID: "bench-producer", Acks: broker.AcksAll, Idempotent: true, BatchSize: Batch})
	if err != nil {
		return res, err
	}
	msgs := make([]broker.Message, Batch)
	for i, v := range benchValues(0) {
		msgs[i] = broker.Message{Topic: benchTopic, Pinned: true, Value: v}
	}
	for sent := 0; sent < n; sent += Batch {
		for _, r := range p.Produce(wctx, msgs[:min(Batch, n-sent)]...) {
			if r.Outcome != broker.OutcomeAcked {
				return res, fmt.Errorf("produce: %v: %w", r.Outcome, r.Err)
			}
		}
	}
	// The leader lets go of entries only up to its last snapshot, keeping
	// TrailingLogs of them (twice that, to be sure): past that, n3 can
	// only catch up by snapshot.
	lead := probe.Of(c).LeaderOf(tp.String())
	if lead == nil {
		return res, fmt.Errorf("%s has no leader", tp)
	}
	snap, _ := strconv.ParseUint(lead.Raft().Stats()["last_snapshot_index"], 10, 64)
	if snap <= missedFrom+2*broker.FastTiming.TrailingLogs {
		return res, fmt.Errorf("the leader's last snapshot is at entry %d and n3 stopped at %d: it may still hold what n3 missed, and n3 would not install a snapshot", snap, missedFrom)
	}
	debug.FreeOSMemory()
	res.Reset = resetPeakRSS() == nil
	stopSampling := sampleGoMemory()
	start := time.Now()
	if err := c.Restart("n3"); err != nil {
		stopSampling()
		return res, err
	}
	err = probe.Poll(wctx, func() bool { return replicasAgree(c, 1) == int64(n) })
	goPeak := stopSampling()
	if err != nil {
		return res, fmt.Errorf("n3 did not catch up with %d messages: %w", n, err)
	}
	res.Load = time.Since(start)
	if hwm, err := readVmHWM(); err == nil {
		res.PeakBytes, res.FromKernel = hwm, true
	} else {
		res.PeakBytes = goPeak
	}
	return res, nil
}
