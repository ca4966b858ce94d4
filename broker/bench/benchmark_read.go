package bench

// The consume and queue phases: a group reading the log back, and
// workers sending, receiving and acking on a queue.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/internal/probe"
)

// ConsumeResult is one consume phase.
type ConsumeResult struct {
	Rate        Rate
	Partitions  int
	Members     int
	PollRecords int // records per poll, and per commit
	Commits     int
}

// Consume fills a topic of partitions partitions (RF 3) with messages
// of ValueBytes, untimed, then times a group of members consumers
// reading all of it back from the start, polling up to 100 records at a
// time and committing after every poll (each commit an acks=all write to
// __consumer_offsets).
func Consume(ctx context.Context, partitions, members, messages int) (ConsumeResult, error) {
	const pollRecords = 100
	res := ConsumeResult{Partitions: partitions, Members: members, PollRecords: pollRecords}
	c, err := broker.NewCluster(broker.Config{Nodes: Nodes})
	if err != nil {
		return res, fmt.Errorf("start cluster: %w", err)
	}
	defer c.Close()
	wctx, cancel := context.WithTimeout(ctx, benchWait)
	defer cancel()
	if err := c.CreateTopic(wctx, broker.TopicConfig{Name: benchTopic, Partitions: partitions, RF: Nodes}); err != nil {
		return res, err
	}
	p, err := c.NewProducer(wctx, broker.ProducerConfig{ClientID: "bench-producer", Acks: broker.AcksAll, BatchSize: 500})
	if err != nil {
		return res, err
	}
	value := make([]byte, ValueBytes)
	for done := 0; done < messages; {
		msgs := make([]broker.Message, min(messages-done, 15000))
		for i := range msgs {
			msgs[i] = broker.Message{Topic: benchTopic, Value: value}
		}
		for _, r := range p.Produce(ctx, msgs...) {
			if r.Outcome != broker.OutcomeAcked {
				return res, fmt.Errorf("fill: %v: %w", r.Outcome, r.Err)
			}
		}
		done += len(msgs)
	}

	// A fresh bound for the waits of the read: a long fill does not eat it.
	wctx, cancel = context.WithTimeout(ctx, benchWait)
	defer cancel()
	cns := make([]*broker.Consumer, members)
	defer func() {
		for _, cn := range cns {
			if cn != nil {
				cn.Close()
			}
		}
	}()
	for i := range cns {
		cns[i], err = c.NewConsumer(wctx, broker.ConsumerConfig{ClientID: fmt.Sprintf("bench-%d", i), Group: "bench",
			Topics: []string{benchTopic}, MaxPollRecords: pollRecords})
		if err != nil {
			return res, err
		}
	}
	if err := probe.Poll(wctx, func() bool { return groupStable(c, "bench", cns) }); err != nil {
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
	res.Rate = Rate{Messages: int(got.Load()), Elapsed: elapsed, CPU: cpu}
	res.Commits = int(commits.Load())
	return res, nil
}

// groupStable reports whether group is stable with exactly these members,
// each active in the group's current generation.
func groupStable(c *broker.Cluster, group string, cns []*broker.Consumer) bool {
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
	Rate          Rate
	EntriesPerMsg float64       // raft entries the queue's group applied per message
	P50           time.Duration // median time from send to ack
}

// Queue sends messages through one queue (RF 3) and times them until
// every one is received and acked. queueBenchSenders senders send batches
// of queueBenchBatch messages of ValueBytes (one raft entry per
// batch); queueBenchConsumers consumers receive up to queueBenchBatch at a
// time and ack them in one request (batchAck) or one request each. Every
// receive and every ack is a raft entry too: in-flight state is
// replicated, so a failover keeps it.
func Queue(ctx context.Context, messages int, batchAck bool) (QueueResult, error) {
	var res QueueResult
	c, err := broker.NewCluster(broker.Config{Nodes: Nodes})
	if err != nil {
		return res, fmt.Errorf("start cluster: %w", err)
	}
	defer c.Close()
	wctx, cancel := context.WithTimeout(ctx, benchWait)
	defer cancel()
	const name = "bench"
	if err := c.CreateQueue(wctx, broker.QueueConfig{Name: name, RF: Nodes, Visibility: time.Minute}); err != nil {
		return res, err
	}
	lead := probe.Of(c).ReplicaOn(c.QueueLeader(name), name)
	if lead == nil {
		return res, fmt.Errorf("queue %s has no leader", name)
	}
	firstIndex := lead.Raft().AppliedIndex()
	total := int64(messages)
	body := make([]byte, ValueBytes)
	var claimed, acked atomic.Int64
	var ferr firstErr
	var latMu sync.Mutex
	var latencies []time.Duration
	var clients []*broker.QueueClient
	for s := range queueBenchSenders + queueBenchConsumers {
		id := fmt.Sprintf("sender-%d", s)
		if s >= queueBenchSenders {
			id = fmt.Sprintf("worker-%d", s-queueBenchSenders)
		}
		qc, err := c.NewQueueClient(broker.QueueClientConfig{ClientID: id})
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
				msgs := make([]broker.QueueMessage, n)
				for i := range msgs {
					msgs[i] = broker.QueueMessage{Body: body}
				}
				for _, r := range qc.Send(wctx, name, msgs...) {
					if r.Outcome != broker.OutcomeAcked {
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
				now := probe.Of(c).Now()
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
	var k broker.QueueCounts
	for _, q := range c.SnapshotWindow(0).Queues {
		if q.Config.Name == name {
			k = q.Counts
		}
	}
	if k.Acked != uint64(total) || k.Sent != uint64(total) || k.Held() != 0 {
		return res, fmt.Errorf("after %d messages the queue counts %+v; want every one sent and acked, none held", total, k)
	}
	slices.Sort(latencies)
	res.Rate = Rate{Messages: messages, Elapsed: elapsed, CPU: cpu}
	res.EntriesPerMsg = float64(lead.Raft().AppliedIndex()-firstIndex) / float64(total)
	res.P50 = latencies[len(latencies)/2]
	return res, nil
}
