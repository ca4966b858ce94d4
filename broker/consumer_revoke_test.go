package broker

import (
	"errors"
	"maps"
	"sync"
	"testing"
	"time"
)

// A member holds records it has processed and not committed when the
// group rebalances, and it does not poll again in time for the rebalance
// to wait for it. Its OnRevoke answer is committed in the generation it
// leaves, so nothing it processed is read again, and a commit it sends
// afterwards for those records' generation is fenced: the new generation
// started from the group's commits, and a late commit must not move them.
func TestRevokeCommitsWhatWasProcessed(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 2})
	produceN(t, c, "orders", "order", 40)
	var mu sync.Mutex
	processed := map[TopicPartition]int64{}
	revokes := 0
	cfg := func(id string) ConsumerConfig {
		return ConsumerConfig{ClientID: id, Group: "billing", Topics: []string{"orders"}, MaxPollRecords: 10,
			SessionTimeout: 900 * time.Millisecond, HeartbeatInterval: 60 * time.Millisecond,
			OnRevoke: func() map[TopicPartition]int64 {
				mu.Lock()
				defer mu.Unlock()
				revokes++
				return maps.Clone(processed)
			}}
	}
	a := mustConsumer(t, c, cfg("a"))
	held := pollUntil(t, a, 10, 10*time.Second)
	gen := held[0].Generation
	seen := map[string]int{}
	mu.Lock()
	for _, r := range held {
		if r.Generation != gen || gen != a.Generation() {
			t.Fatalf("record %s fetched in generation %d; a is in %d", r.MsgID, r.Generation, a.Generation())
		}
		seen[r.MsgID]++
		processed[r.TopicPartition] = max(processed[r.TopicPartition], r.Offset+1)
	}
	done := maps.Clone(processed)
	mu.Unlock()

	b := mustConsumer(t, c, cfg("b")) // returns once a has rejoined without polling
	waitStable(t, c, "billing", a, b)
	mu.Lock()
	if revokes == 0 {
		t.Error("a gave up its partitions without asking OnRevoke")
	}
	mu.Unlock()
	if err := a.CommitFetched(ctxFor(t, 5*time.Second), gen, done); !errors.Is(err, ErrFenced) {
		t.Errorf("a's commit for generation %d in generation %d: %v; want it fenced", gen, a.Generation(), err)
	}
	ctx := ctxFor(t, 20*time.Second)
	for len(seen) < 40 {
		for _, cn := range []*Consumer{a, b} {
			recs, err := cn.Poll(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				seen[r.MsgID]++
			}
		}
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("%s delivered %d times; it was processed and committed on revoke", id, n)
		}
	}
}
