package kafkawire

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
)

// BenchmarkFetch asks the leader of a partition of 10,000 records, in
// batches of 100 written to its segment files, for up to 1 MiB from the
// start, over and over: the work of one fetch on the node, from the
// request to the bytes on the socket (the client's reading of the answer
// is in the numbers too). One op is one fetch.
//
//	go test -run '^$' -bench Fetch -benchmem ./broker/kafkawire/
func BenchmarkFetch(b *testing.B) {
	l := newLabIn(b, b.TempDir(), 3, broker.TopicConfig{Name: "orders", Partitions: 1, SegmentRecords: 100_000})
	tp := broker.TopicPartition{Topic: "orders"}
	ctx := ctxFor(b, 5*time.Minute)
	leader, err := l.c.WaitForLeader(ctx, tp)
	if err != nil {
		b.Fatal(err)
	}
	cl := l.client(b).Broker(int(l.s.brokerID(leader)))
	values := make([]string, 100)
	for i := range 100 {
		for j := range values {
			values[j] = fmt.Sprintf("%-100d", i*100+j)
		}
		if got := produceAnswer(b, cl, producerBatch(-1, -1, values...)); got.ErrorCode != 0 {
			b.Fatalf("produce: code %d", got.ErrorCode)
		}
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MaxBytes = -1, 0, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "orders"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	b.ReportAllocs()
	b.ResetTimer()
	var n int
	for range b.N {
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			b.Fatal(err)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
			b.Fatalf("fetch: code %d, %d bytes", p.ErrorCode, len(p.RecordBatches))
		}
		n += len(p.RecordBatches)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds()/(1<<20), "MiB/s")
}
