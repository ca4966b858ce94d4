package bench

// The Kafka listener beside franz-go's kfake, a Kafka it runs in the
// same process (one broker, RF 1), with the same kgo client, one
// sub-benchmark at a time (Run's Kafka phase measures both sides in one
// go). mqlab replicates every batch to three nodes through raft, so the
// targets are ratios: mqlab's produce throughput at least
// TargetKafkaProduce of kfake's, its consume at least kfake's, its
// one-in-flight produce latency at most twice kfake's.
//
//	go test -run '^$' -bench KafkaVsKfake -benchtime 20000x ./broker/bench/
//
// Each sub-benchmark reports msgs/s (produce, consume) or p50-us (one in
// flight); one op is one record.

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/kafkawire"
)

// benchTarget starts one side of the comparison and returns its seeds.
type benchTarget struct {
	name  string
	start func(b *testing.B) []string
}

var benchTargets = []benchTarget{
	{"mqlab", func(b *testing.B) []string { return startBenchLab(b, "") }},
	// As a lab runs: every replica writes its segment files.
	{"mqlab+files", func(b *testing.B) []string { return startBenchLab(b, b.TempDir()) }},
	{"kfake", func(b *testing.B) []string {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.Close)
		return c.ListenAddrs()
	}},
}

// startBenchLab starts a lab of 3 nodes with the Kafka protocol, its
// segment files in dir ("" for none). The topic has Kafka's default
// segment.bytes, not the lab's teaching segments of 16 records.
func startBenchLab(b *testing.B, dir string) []string {
	c, err := broker.NewCluster(broker.Config{Nodes: 3, DataDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.CreateTopic(ctx, broker.TopicConfig{Name: "orders", Partitions: 1, RF: 3, SegmentBytes: KafkaSegmentBytes}); err != nil {
		b.Fatal(err)
	}
	s, err := kafkawire.Listen(c, kafkawire.Config{Port: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s.Seeds()
}

func benchClient(b *testing.B, seeds []string, opts ...kgo.Opt) *kgo.Client {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("orders"),
		kgo.RequiredAcks(kgo.AllISRAcks())}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	return cl
}

var benchValue = make([]byte, 100)

// reportCPU reports the process's CPU time per record since cpu0, the
// client's and the broker's together: on a machine shared with other
// work it moves less than the rate does.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/msg")
	}
}

func BenchmarkKafkaVsKfake(b *testing.B) {
	b.Logf("%d cores, load %s; the lab's topic has segment.bytes %d, Kafka's default", runtime.NumCPU(), LoadAverage(), KafkaSegmentBytes)
	for _, tg := range benchTargets {
		b.Run("produce/"+tg.name, func(b *testing.B) {
			p := benchClient(b, tg.start(b), kgo.ProducerLinger(time.Millisecond))
			ctx := context.Background()
			b.ResetTimer()
			start, cpu0 := time.Now(), processCPU()
			for range b.N {
				p.Produce(ctx, &kgo.Record{Value: benchValue}, func(_ *kgo.Record, err error) {
					if err != nil {
						b.Error(err)
					}
				})
			}
			if err := p.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
			reportCPU(b, cpu0)
		})
		b.Run("one-in-flight/"+tg.name, func(b *testing.B) {
			p := benchClient(b, tg.start(b))
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if err := p.ProduceSync(ctx, &kgo.Record{Value: benchValue}).FirstErr(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
		})
		b.Run("consume/"+tg.name, func(b *testing.B) {
			seeds := tg.start(b)
			p := benchClient(b, seeds, kgo.ProducerLinger(time.Millisecond))
			ctx := context.Background()
			for range b.N {
				p.Produce(ctx, &kgo.Record{Value: benchValue}, nil)
			}
			if err := p.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := processCPU()
			r, err := consumeInChild(ctx, seeds, b.N)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(r.MsgsPerSec(), "msgs/s")
			reportCPU(b, cpu0-r.CPU) // the broker's CPU and the consumer's
		})
	}
}
