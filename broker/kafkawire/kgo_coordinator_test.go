package kafkawire

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mqlab/mqlab/broker"
)

// A second kgo member joins a group of one and both end up holding
// partitions. kgo balances cooperatively, so the first member's partitions
// move in two rebalances, and the second one's JoinGroup is the group
// leader's: the coordinator must answer it though it completes the
// generation without a change to report. With the coordinator's node
// killed before the second member comes, the new coordinator must admit
// it while the first member still heartbeats (kgo's default session is
// 45 s, longer than this test waits) and the first member's rejoin.
func TestKgoGroupGainsAMember(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	for _, kill := range []bool{false, true} {
		name := "coordinator stays"
		if kill {
			name = "coordinator killed"
		}
		t.Run(name, func(t *testing.T) { gainAMember(t, kill) })
	}
}

func gainAMember(t *testing.T, kill bool) {
	l := newLab(t, 3, broker.TopicConfig{Name: "orders", Partitions: 4})
	ctx := ctxFor(t, 90*time.Second)
	consume := func(id string) {
		c := l.client(t, kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("orders"), kgo.ClientID(id))
		go func() {
			for ctx.Err() == nil {
				if c.PollFetches(ctx).IsClientClosed() {
					return
				}
			}
		}()
	}
	// waitGroup polls the group until ok holds, and returns it.
	waitGroup := func(what string, ok func(g broker.ConsumerGroupState) bool) broker.ConsumerGroupState {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			g, err := l.c.DescribeGroup(ctx, "billing")
			if err == nil && ok(g) {
				return g
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 30 s, %s: group is %+v (err %v)", what, g, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	assigned := func(g broker.ConsumerGroupState, n int) bool {
		if g.State != "stable" || g.Coordinator == "" || len(g.Members) != n {
			return false
		}
		for _, m := range g.Members {
			if len(m.Assignment) == 0 {
				return false
			}
		}
		return true
	}

	consume("billing-1")
	g := waitGroup("the first member holds every partition", func(g broker.ConsumerGroupState) bool { return assigned(g, 1) })
	dead := ""
	if kill {
		dead = g.Coordinator
		if err := l.c.Kill(dead); err != nil {
			t.Fatalf("kill %s: %v", dead, err)
		}
		t.Logf("killed %s, the coordinator of group billing in generation %d", dead, g.Generation)
	}
	consume("billing-2")
	g = waitGroup("both members hold partitions", func(g broker.ConsumerGroupState) bool {
		return g.Coordinator != dead && assigned(g, 2)
	})
	t.Logf("generation %d under %s", g.Generation, g.Coordinator)
}
