package broker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mqlab/mqlab/internal/parallel"
)

// Raft's leadership transfer runs goroutines it does not track; they end
// within an election timeout on their own.
var leakOptions = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*Raft).leadershipTransfer"),
	goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*Raft).leaderLoop.func2"),
	// A raft future that raft never answers (see replica.await) keeps its
	// reader waiting; the broker no longer waits with it.
	goleak.IgnoreAnyFunction("github.com/mqlab/mqlab/broker.(*replica).await.func1"),
}

func TestMain(m *testing.M) {
	if !raceEnabled {
		parallel.Raise("4") // clusters that mostly wait on raft's timers, a few at a time
	}
	goleak.VerifyTestMain(m, leakOptions...)
}

// newTestCluster starts a fast-timing cluster closed at the end of the test.
func newTestCluster(t testing.TB, nodes int) *Cluster {
	t.Helper()
	c, err := NewCluster(Config{Nodes: nodes})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func mustCreate(t testing.TB, c *Cluster, cfg TopicConfig) {
	t.Helper()
	if err := c.CreateTopic(ctxFor(t, 20*time.Second), cfg); err != nil {
		t.Fatalf("create topic %s: %v", cfg.Name, err)
	}
}

func mustProducer(t testing.TB, c *Cluster, cfg ProducerConfig) *Producer {
	t.Helper()
	p, err := c.NewProducer(ctxFor(t, 10*time.Second), cfg)
	if err != nil {
		t.Fatalf("new producer: %v", err)
	}
	return p
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := poll(ctxFor(t, d), cond); err != nil {
		t.Fatalf("waited %v for %s: %v", d, what, err)
	}
}

// partitionState finds one partition in a snapshot.
func partitionState(s Snapshot, tp TopicPartition) PartitionState {
	for _, t := range s.Topics {
		if t.Config.Name != tp.Topic {
			continue
		}
		for _, p := range t.Partitions {
			if p.Partition == tp.Partition {
				return p
			}
		}
	}
	return PartitionState{}
}

func replicaState(s Snapshot, tp TopicPartition, node string) ReplicaState {
	for _, r := range partitionState(s, tp).Replicas {
		if r.Node == node {
			return r
		}
	}
	return ReplicaState{}
}

// readAll reads a partition's committed log from its start.
func readAll(t testing.TB, c *Cluster, tp TopicPartition) []Record {
	t.Helper()
	ctx := ctxFor(t, 20*time.Second)
	start, hwm, err := c.Offsets(ctx, "test-reader", tp)
	if err != nil {
		t.Fatalf("offsets of %s: %v", tp, err)
	}
	var out []Record
	for off := start; off < hwm; {
		res, err := c.Fetch(ctx, "test-reader", tp, off, 500)
		if err != nil {
			t.Fatalf("fetch %s at %d: %v", tp, off, err)
		}
		if len(res.Records) == 0 {
			break
		}
		out = append(out, res.Records...)
		off = res.Records[len(res.Records)-1].Offset + 1
	}
	return out
}

func msg(topic string, key string, i int) Message {
	return Message{Topic: topic, Key: []byte(key), Value: []byte(fmt.Sprintf("value %d", i)), MsgID: fmt.Sprintf("producer-%d", i)}
}
