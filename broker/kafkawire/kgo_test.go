package kafkawire

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/partlog"
)

// lab is a fast-timing cluster with the Kafka protocol on every node.
type lab struct {
	c *broker.Cluster
	s *Server
}

func newLab(t *testing.T, nodes int, topics ...broker.TopicConfig) *lab {
	t.Helper()
	// As a lab runs: the replicas write segment files, and fetches serve
	// their bytes.
	return newLabIn(t, t.TempDir(), nodes, topics...)
}

// newLabIn is newLab with the replicas writing their segment files in dir
// ("" for none).
func newLabIn(t testing.TB, dir string, nodes int, topics ...broker.TopicConfig) *lab {
	t.Helper()
	c, err := broker.NewCluster(broker.Config{Nodes: nodes, DataDir: dir})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range topics {
		if err := c.CreateTopic(ctx, tc); err != nil {
			t.Fatalf("create topic %s: %v", tc.Name, err)
		}
	}
	s, err := Listen(c, Config{Port: -1})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return &lab{c: c, s: s}
}

func (l *lab) client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	all := append([]kgo.Opt{
		kgo.SeedBrokers(l.s.Seeds()...),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }),
		kgo.MetadataMinAge(50 * time.Millisecond),
		kgo.RequestTimeoutOverhead(2 * time.Second),
	}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		t.Fatalf("kgo client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// A kgo producer and a kgo consumer group against the lab: what is
// produced comes back with its headers and timestamp, keyed records land
// where murmur2 puts them, and the group commits. The replicas keep no
// files, so fetches encode the records they read.
func TestKgoProduceAndConsume(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	l := newLabIn(t, "", 3, broker.TopicConfig{Name: "orders", Partitions: 3})
	p := l.client(t, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ClientID("shop"))
	const n = 60
	stamp := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i := range n {
		rec := &kgo.Record{Topic: "orders", Key: fmt.Appendf(nil, "user-%d", i%7), Value: fmt.Appendf(nil, "order %d", i),
			Timestamp: stamp.Add(time.Duration(i) * time.Millisecond), Headers: []kgo.RecordHeader{{Key: "trace", Value: fmt.Appendf(nil, "t%d", i)}}}
		if err := p.ProduceSync(ctxFor(t, 20*time.Second), rec).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	c := l.client(t, kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("orders"), kgo.ClientID("billing-1"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := map[string]bool{}
	ctx := ctxFor(t, 30*time.Second)
	for len(got) < n {
		fs := c.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records before the deadline", len(got), n)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			want := int32(partlog.PartitionForKey(r.Key, 3))
			if r.Partition != want {
				t.Errorf("%s is in partition %d; murmur2 puts key %s in %d", r.Value, r.Partition, r.Key, want)
			}
			got[string(r.Value)] = true
			var i int
			fmt.Sscanf(string(r.Value), "order %d", &i)
			if len(r.Headers) != 1 || r.Headers[0].Key != "trace" || string(r.Headers[0].Value) != fmt.Sprintf("t%d", i) {
				t.Errorf("%s came back with headers %v; want trace=t%d", r.Value, r.Headers, i)
			}
			if want := stamp.Add(time.Duration(i) * time.Millisecond); !r.Timestamp.Equal(want) {
				t.Errorf("%s came back stamped %v; the producer stamped it %v", r.Value, r.Timestamp, want)
			}
		})
	}
	if err := c.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	g, err := l.c.DescribeGroup(ctx, "billing")
	if err != nil {
		t.Fatalf("describe group: %v", err)
	}
	for _, p := range g.Partitions {
		if p.HighWatermark > 0 && p.Committed != p.HighWatermark {
			t.Errorf("%s: the group committed %d; want the high-water mark %d", p.TopicPartition, p.Committed, p.HighWatermark)
		}
	}
	if g.Lag != 0 {
		t.Errorf("the group's lag is %d; want 0", g.Lag)
	}
}

// An idempotent producer with acks=all, its partition's leader killed in
// the middle of the stream: every acknowledged record is in the log
// exactly once, in per-key order.
func TestKgoIdempotentProducerAcrossLeaderKill(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	l := newLab(t, 3, broker.TopicConfig{Name: "orders", Partitions: 1})
	p := l.client(t, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ClientID("shop"), kgo.DefaultProduceTopic("orders"),
		kgo.ProducerLinger(time.Millisecond))
	tp := broker.TopicPartition{Topic: "orders", Partition: 0}
	const n = 400
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	ctx := ctxFor(t, 60*time.Second)
	for i := range n {
		if i == n/2 {
			// The kill is meant for the stream, not for the producer's
			// start: killed while its first InitProducerID waits on a fresh
			// connection, kgo reads the closed connection as a broker
			// asking for SASL and fails every buffered record. One acked
			// record says the producer has its id.
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
				mu.Lock()
				started := len(acked) > 0
				mu.Unlock()
				if started {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("no record acknowledged within 30 s: the producer never started")
				}
			}
			leader := l.c.Leader(tp)
			if err := l.c.Kill(leader); err != nil {
				t.Fatalf("kill %s: %v", leader, err)
			}
			t.Logf("killed %s, the leader, after %d records were handed to the producer", leader, i)
		}
		wg.Add(1)
		rec := &kgo.Record{Key: fmt.Appendf(nil, "k%d", i%5), Value: fmt.Appendf(nil, "%d", i)}
		p.Produce(ctx, rec, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("record %s: %v", r.Value, err)
				return
			}
			mu.Lock()
			acked = append(acked, string(r.Value))
			mu.Unlock()
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	seen := map[string]int{}
	last := map[string]int{}
	for off := int64(0); ; {
		res, err := l.c.Fetch(ctx, "check", tp, off, 500)
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		for _, r := range res.Records {
			var v int
			fmt.Sscan(string(r.Value), &v)
			seen[string(r.Value)]++
			if prev, ok := last[string(r.Key)]; ok && v < prev {
				t.Errorf("key %s: %d comes after %d in the log", r.Key, v, prev)
			}
			last[string(r.Key)] = v
			off = r.Offset + 1
		}
		if off >= res.HighWatermark {
			break
		}
	}
	var dups []string
	for v, k := range seen {
		if k > 1 {
			dups = append(dups, v)
		}
	}
	sort.Strings(dups)
	if len(dups) > 0 {
		t.Errorf("records in the log more than once: %v", dups)
	}
	for _, v := range acked {
		if seen[v] == 0 {
			t.Errorf("record %s was acknowledged but is not in the log", v)
		}
	}
	if len(acked) != n {
		t.Errorf("%d of %d records acknowledged", len(acked), n)
	}
}
