package broker

import (
	"errors"
	"testing"
	"time"
)

// The raft pace stretches every replica's heartbeat and election timeouts
// live, and those of replicas started later; the lease stays the preset's.
func TestRaftPace(t *testing.T) {
	c := newTestCluster(t, 3)
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 1})
	if err := c.SetRaftPace(4); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, id := range c.nodeIDs {
			for g, rep := range c.nodes[id].replicas {
				rc := rep.raft().ReloadableConfig()
				if rc.HeartbeatTimeout != 4*FastTiming.HeartbeatTimeout || rc.ElectionTimeout != 4*FastTiming.ElectionTimeout {
					t.Errorf("%s: %s on %s runs at heartbeat %v, election %v; want 4x the preset's", when, g, id, rc.HeartbeatTimeout, rc.ElectionTimeout)
				}
			}
		}
	}
	check("after SetRaftPace(4)")
	if got := c.requestTimeout(); got != 4*FastTiming.RequestTimeout {
		t.Errorf("request timeout %v; want 4x the preset's", got)
	}
	if err := c.Kill("n1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart("n1"); err != nil {
		t.Fatal(err)
	}
	check("after n1 restarted")
	for _, bad := range []float64{0.5, 0, MaxRaftPace + 1} {
		if err := c.SetRaftPace(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("SetRaftPace(%v) = %v; want ErrInvalid", bad, err)
		}
	}
	if err := c.SetRaftPace(1); err != nil || c.paced(time.Second) != time.Second {
		t.Errorf("SetRaftPace(1) = %v, paced 1s = %v; want the preset back", err, c.paced(time.Second))
	}
}
