package broker

// BenchmarkQueueSendReceiveAck: send + receive + ack throughput through one
// queue, RF 3, 8 competing consumers. One op is one message that was sent,
// received and acked, so -benchtime=Nx fixes the work, e.g.
//
//	go test -run '^$' -bench QueueSendReceiveAck -benchtime=5000x -count=3 ./broker/
//
// Four senders send batches of 10 messages of 100 bytes (one raft entry per
// batch); each consumer receives up to 10 at a time and acks them either in
// one request (ack=batch) or one request per message (ack=each). Every
// receive and every ack is a raft entry too: in-flight state is replicated
// so a failover keeps it. Reported: messages/s end to end, raft entries
// per message, and the median time from send to ack.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	queueBenchSenders   = 4
	queueBenchConsumers = 8
	queueBenchBatch     = 10
	queueBenchBody      = 100
)

func BenchmarkQueueSendReceiveAck(b *testing.B) {
	for _, batchAck := range []bool{true, false} {
		name := "ack=each"
		if batchAck {
			name = "ack=batch"
		}
		b.Run(name, func(b *testing.B) { benchQueue(b, batchAck) })
	}
}

func benchQueue(b *testing.B, batchAck bool) {
	c, err := NewCluster(Config{Nodes: 3})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := c.CreateQueue(ctx, QueueConfig{Name: "bench", RF: 3, Visibility: time.Minute}); err != nil {
		b.Fatal(err)
	}
	lead := c.replicaOn(c.QueueLeader("bench"), "bench")
	firstIndex := lead.raft().AppliedIndex()
	total := int64(b.N)
	body := make([]byte, queueBenchBody)
	var claimed, acked atomic.Int64
	var failure atomic.Pointer[error]
	fail := func(err error) { failure.CompareAndSwap(nil, &err) }
	var latMu sync.Mutex
	var latencies []time.Duration

	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for s := 0; s < queueBenchSenders; s++ {
		qc, err := c.NewQueueClient(QueueClientConfig{ClientID: fmt.Sprintf("sender-%d", s)})
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for failure.Load() == nil {
				from := claimed.Add(queueBenchBatch) - queueBenchBatch
				n := min(queueBenchBatch, total-from)
				if n <= 0 {
					return
				}
				msgs := make([]QueueMessage, n)
				for i := range msgs {
					msgs[i] = QueueMessage{Body: body}
				}
				for _, r := range qc.Send(ctx, "bench", msgs...) {
					if r.Outcome != OutcomeAcked {
						fail(fmt.Errorf("send: %v %v", r.Outcome, r.Err))
					}
				}
			}
		}()
	}
	for w := 0; w < queueBenchConsumers; w++ {
		qc, err := c.NewQueueClient(QueueClientConfig{ClientID: fmt.Sprintf("worker-%d", w)})
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for acked.Load() < total && failure.Load() == nil {
				ds, err := qc.Receive(ctx, "bench", queueBenchBatch, 0, 50*time.Millisecond)
				if err != nil {
					fail(err)
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
					errs, err := qc.AckBatch(ctx, "bench", receipts)
					if err != nil {
						fail(err)
						return
					}
					for _, e := range errs {
						if e != nil {
							fail(e)
						}
					}
				} else {
					for _, r := range receipts {
						if err := qc.Ack(ctx, "bench", r); err != nil {
							fail(err)
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
	elapsed := time.Since(start)
	b.StopTimer()
	if err := failure.Load(); err != nil {
		b.Fatal(*err)
	}
	k := queueCounts(c, "bench")
	if k.Acked != uint64(total) || k.Sent != uint64(total) || k.Held() != 0 {
		b.Fatalf("after %d messages the queue counts %+v", total, k)
	}
	entries := float64(lead.raft().AppliedIndex() - firstIndex)
	slices.Sort(latencies)
	b.ReportMetric(float64(total)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(entries/float64(total), "entries/msg")
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(0, "ns/op") // wall time per message is msgs/s upside down
}
