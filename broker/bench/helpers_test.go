package bench

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/internal/probe"
)

// TestMain lets this binary be the Kafka benchmarks' consumer process
// (ServeConsumer) before it runs any test.
func TestMain(m *testing.M) {
	ServeConsumer()
	os.Exit(m.Run())
}

func newTestCluster(t testing.TB, nodes int) *broker.Cluster {
	t.Helper()
	c, err := broker.NewCluster(broker.Config{Nodes: nodes})
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

func mustCreate(t testing.TB, c *broker.Cluster, cfg broker.TopicConfig) {
	t.Helper()
	if err := c.CreateTopic(ctxFor(t, 20*time.Second), cfg); err != nil {
		t.Fatalf("create topic %s: %v", cfg.Name, err)
	}
}

func mustProducer(t testing.TB, c *broker.Cluster, cfg broker.ProducerConfig) *broker.Producer {
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
	if err := probe.Poll(ctxFor(t, d), cond); err != nil {
		t.Fatalf("waited %v for %s: %v", d, what, err)
	}
}

func msg(topic string, key string, i int) broker.Message {
	return broker.Message{Topic: topic, Key: []byte(key), Value: []byte(fmt.Sprintf("value %d", i)), MsgID: fmt.Sprintf("producer-%d", i)}
}
