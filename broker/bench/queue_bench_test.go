package bench

// BenchmarkQueueSendReceiveAck: send + receive + ack throughput through one
// queue, RF 3, 8 competing consumers (see Queue, which `mqlab bench`
// runs too). One op is one message that was sent, received and acked, so
// -benchtime=Nx fixes the work, e.g.
//
//	go test -run '^$' -bench QueueSendReceiveAck -benchtime=5000x -count=3 ./broker/bench/
//
// Four senders send batches of 10 messages of 100 bytes (one raft entry per
// batch); each consumer receives up to 10 at a time and acks them either in
// one request (ack=batch) or one request per message (ack=each). Every
// receive and every ack is a raft entry too: in-flight state is replicated
// so a failover keeps it. Reported: messages/s end to end, raft entries
// per message, and the median time from send to ack.

import (
	"context"
	"testing"
	"time"
)

func BenchmarkQueueSendReceiveAck(b *testing.B) {
	for _, batchAck := range []bool{true, false} {
		name := "ack=each"
		if batchAck {
			name = "ack=batch"
		}
		b.Run(name, func(b *testing.B) {
			b.StopTimer()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			q, err := Queue(ctx, b.N, batchAck)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(q.Rate.MsgsPerSec(), "msgs/s")
			b.ReportMetric(q.EntriesPerMsg, "entries/msg")
			b.ReportMetric(float64(q.P50.Microseconds())/1000, "p50-ms")
			b.ReportMetric(0, "ns/op") // wall time per message is msgs/s upside down
		})
	}
}
