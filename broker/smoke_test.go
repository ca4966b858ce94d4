package broker

import (
	"testing"
	"time"
)

func TestProduceAndFetch(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 3})
	s := c.Snapshot()
	leaders := map[string]bool{}
	for _, p := range s.Topics[0].Partitions {
		leaders[p.Leader] = true
	}
	if len(leaders) != 3 {
		t.Errorf("leaders of 3 partitions on 3 nodes should spread, got %v", leaders)
	}
	p := mustProducer(t, c, ProducerConfig{ClientID: "producer", Acks: AcksAll, Idempotent: true})
	var msgs []Message
	for i := 0; i < 30; i++ {
		msgs = append(msgs, msg("orders", "order-"+string(rune('a'+i%5)), i))
	}
	res := p.Produce(ctxFor(t, 10*time.Second), msgs...)
	for i, r := range res {
		if r.Outcome != OutcomeAcked {
			t.Fatalf("message %d: %v %v", i, r.Outcome, r.Err)
		}
	}
	total := 0
	for part := 0; part < 3; part++ {
		total += len(readAll(t, c, TopicPartition{"orders", part}))
	}
	if total != 30 {
		t.Fatalf("read %d records, want 30", total)
	}
}
