package bench

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/kafkawire"
)

// The Kafka phase: franz-go's kgo client, the same on both sides, writes
// 100-byte values with acks=all and batching on (a linger of 1 ms), then
// reads them back, once against the lab's Kafka listener (Nodes nodes,
// RF 3, raft under every batch) and once against kfake, the Kafka franz-go
// runs in a process for its own tests (one broker, RF 1). The targets are
// ratios, lab over kfake, measured side by side in one run.
const (
	// TargetKafkaProduce: the lab's kgo produce rate is at least this
	// share of kfake's.
	TargetKafkaProduce = 0.8
	// TargetKafkaConsume: the lab's kgo consume rate is at least kfake's.
	TargetKafkaConsume = 1.0
	// KafkaLinger is the producer's linger: how long kgo waits to fill a
	// batch.
	KafkaLinger = time.Millisecond
)

// KafkaSide is what kgo did against one Kafka.
type KafkaSide struct {
	Produce, Consume Rate
}

// KafkaResult is the phase on both sides.
type KafkaResult struct {
	Lab, Kfake KafkaSide
}

// ProduceRatio is the lab's produce rate over kfake's.
func (r KafkaResult) ProduceRatio() float64 {
	return r.Lab.Produce.MsgsPerSec() / r.Kfake.Produce.MsgsPerSec()
}

// ConsumeRatio is the lab's consume rate over kfake's.
func (r KafkaResult) ConsumeRatio() float64 {
	return r.Lab.Consume.MsgsPerSec() / r.Kfake.Consume.MsgsPerSec()
}

// Kafka runs the phase: n records produced, then consumed, on each side,
// kfake first. The lab writes its segment files when Run was asked to.
func Kafka(ctx context.Context, n int) (KafkaResult, error) {
	var res KafkaResult
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		return res, fmt.Errorf("kfake: %w", err)
	}
	res.Kfake, err = kafkaSide(ctx, kf.ListenAddrs(), n)
	kf.Close()
	if err != nil {
		return res, fmt.Errorf("kfake: %w", err)
	}

	c, err := broker.NewCluster(clusterConfig())
	if err != nil {
		return res, err
	}
	defer c.Close()
	// Kafka's default segment.bytes, files or not, as BenchmarkKafkaVsKfake
	// has it: a fetch stops at a segment's end, as Kafka's does, and at
	// the 1 MiB the other phases roll at with files, a second fetch for
	// each segment's last tenth made the lab read about an eighth slower.
	if err := c.CreateTopic(ctx, broker.TopicConfig{Name: "orders", Partitions: 1, RF: Nodes, SegmentBytes: KafkaSegmentBytes}); err != nil {
		return res, err
	}
	if _, err := c.WaitForLeader(ctx, broker.TopicPartition{Topic: "orders"}); err != nil {
		return res, err
	}
	s, err := kafkawire.Listen(c, kafkawire.Config{Port: -1})
	if err != nil {
		return res, err
	}
	defer s.Close()
	res.Lab, err = kafkaSide(ctx, s.Seeds(), n)
	if err != nil {
		return res, fmt.Errorf("the lab: %w", err)
	}
	return res, nil
}

// kafkaSide produces n records to orders/0 through seeds and reads them
// back from the start in processes of their own (consumeInChild), the
// median of consumeReads.
func kafkaSide(ctx context.Context, seeds []string, n int) (KafkaSide, error) {
	var side KafkaSide
	p, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("orders"),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(KafkaLinger))
	if err != nil {
		return side, err
	}
	defer p.Close()
	value := make([]byte, ValueBytes)
	var failed firstErr
	cpu0, start := processCPU(), time.Now()
	for range n {
		p.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) { failed.set(err) })
	}
	if err := p.Flush(ctx); err != nil {
		return side, err
	}
	if err := failed.get(); err != nil {
		return side, fmt.Errorf("produce: %w", err)
	}
	side.Produce = Rate{Messages: n, Elapsed: time.Since(start), CPU: processCPU() - cpu0}

	reads := make([]Rate, consumeReads)
	for i := range reads {
		if reads[i], err = consumeInChild(ctx, seeds, n); err != nil {
			return side, fmt.Errorf("consume: %w", err)
		}
	}
	slices.SortFunc(reads, func(a, b Rate) int { return cmp.Compare(a.MsgsPerSec(), b.MsgsPerSec()) })
	side.Consume = reads[len(reads)/2]
	return side, nil
}

// consumeReads is how many times each side's records are read back, each
// by a new consumer process: the phase takes the median. One read of a
// million records lasts about half a second, two processes share the
// cores, and a single read's ratio ranged from 0.92 to 1.11 in three runs
// of the same build.
const consumeReads = 3
