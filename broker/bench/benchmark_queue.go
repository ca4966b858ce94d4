package bench

// The queue phase: workers sending, receiving and acking on a queue.

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
	c, err := broker.NewCluster(clusterConfig())
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
	senders, workers, err := queueClients(c)
	if err != nil {
		return res, err
	}
	run := &queueRun{c: c, name: name, total: int64(messages), body: make([]byte, ValueBytes), batchAck: batchAck}

	runtime.GC()
	cpu0 := processCPU()
	start := time.Now()
	var wg sync.WaitGroup
	for _, qc := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.send(wctx, qc)
		}()
	}
	for _, qc := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.work(wctx, qc)
		}()
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), processCPU()-cpu0
	if err := run.ferr.get(); err != nil {
		return res, err
	}
	if err := checkDrained(c, name, run.total); err != nil {
		return res, err
	}
	slices.Sort(run.latencies)
	res.Rate = Rate{Messages: messages, Elapsed: elapsed, CPU: cpu}
	res.EntriesPerMsg = float64(lead.Raft().AppliedIndex()-firstIndex) / float64(run.total)
	res.P50 = run.latencies[len(run.latencies)/2]
	return res, nil
}

// queueClients makes the phase's senders and workers.
func queueClients(c *broker.Cluster) (senders, workers []*broker.QueueClient, err error) {
	var clients []*broker.QueueClient
	for s := range queueBenchSenders + queueBenchConsumers {
		id := fmt.Sprintf("sender-%d", s)
		if s >= queueBenchSenders {
			id = fmt.Sprintf("worker-%d", s-queueBenchSenders)
		}
		qc, err := c.NewQueueClient(broker.QueueClientConfig{ClientID: id})
		if err != nil {
			return nil, nil, err
		}
		clients = append(clients, qc)
	}
	return clients[:queueBenchSenders], clients[queueBenchSenders:], nil
}

// queueRun is what the senders and workers of one queue phase share.
type queueRun struct {
	c        *broker.Cluster
	name     string
	total    int64
	body     []byte
	batchAck bool

	claimed, acked atomic.Int64
	ferr           firstErr

	latMu     sync.Mutex
	latencies []time.Duration // from send to ack, one a message
}

// send claims batches of the messages to send until none are left.
func (r *queueRun) send(ctx context.Context, qc *broker.QueueClient) {
	for r.ferr.get() == nil && ctx.Err() == nil {
		from := r.claimed.Add(queueBenchBatch) - queueBenchBatch
		n := min(queueBenchBatch, r.total-from)
		if n <= 0 {
			return
		}
		msgs := make([]broker.QueueMessage, n)
		for i := range msgs {
			msgs[i] = broker.QueueMessage{Body: r.body}
		}
		for _, res := range qc.Send(ctx, r.name, msgs...) {
			if res.Outcome != broker.OutcomeAcked {
				r.ferr.set(fmt.Errorf("send: %v: %w", res.Outcome, res.Err))
			}
		}
	}
}

// work receives and acks until every message is acked.
func (r *queueRun) work(ctx context.Context, qc *broker.QueueClient) {
	for r.acked.Load() < r.total && r.ferr.get() == nil {
		if err := ctx.Err(); err != nil {
			r.ferr.set(fmt.Errorf("%d of %d messages acked: %w", r.acked.Load(), r.total, err))
			return
		}
		ds, err := qc.Receive(ctx, r.name, queueBenchBatch, 0, 50*time.Millisecond)
		if err != nil {
			r.ferr.set(fmt.Errorf("receive: %w", err))
			return
		}
		if len(ds) == 0 {
			continue
		}
		if err := r.ack(ctx, qc, ds); err != nil {
			r.ferr.set(fmt.Errorf("ack: %w", err))
			return
		}
		now := probe.Of(r.c).Now()
		r.latMu.Lock()
		for _, d := range ds {
			r.latencies = append(r.latencies, now.Sub(d.EnqueuedAt))
		}
		r.latMu.Unlock()
		r.acked.Add(int64(len(ds)))
	}
}

// ack acks the deliveries in one request, or one request each.
func (r *queueRun) ack(ctx context.Context, qc *broker.QueueClient, ds []broker.Delivery) error {
	receipts := make([]string, len(ds))
	for i, d := range ds {
		receipts[i] = d.ReceiptHandle
	}
	if r.batchAck {
		errs, err := qc.AckBatch(ctx, r.name, receipts)
		if err == nil {
			err = errors.Join(errs...)
		}
		return err
	}
	for _, receipt := range receipts {
		if err := qc.Ack(ctx, r.name, receipt); err != nil {
			return err
		}
	}
	return nil
}

// checkDrained checks that the queue's counts say every message was sent
// and acked, and none is held.
func checkDrained(c *broker.Cluster, name string, total int64) error {
	var k broker.QueueCounts
	for _, q := range c.SnapshotWindow(0).Queues {
		if q.Config.Name == name {
			k = q.Counts
		}
	}
	if k.Acked != uint64(total) || k.Sent != uint64(total) || k.Held() != 0 {
		return fmt.Errorf("after %d messages the queue counts %+v; want every one sent and acked, none held", total, k)
	}
	return nil
}
