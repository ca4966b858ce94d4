package broker

import (
	"errors"
	"testing"
	"time"
)

// The raft pace stretches every replica's heartbeat and election timeouts
// live, and those of replicas started later.
func TestRaftPace(t *testing.T) {
	t.Parallel()
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

// A replica's raft state says what the network carried: the leader's
// appends reach both followers, and once one is isolated the leader's
// appends to it are lost while the other still answers.
func TestRaftStateExchanges(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 1})
	tp := TopicPartition{Topic: "orders"}
	leader, err := c.WaitForLeader(ctxFor(t, 10*time.Second), tp)
	if err != nil {
		t.Fatal(err)
	}
	leaderState := func() ReplicaState {
		for _, r := range c.Snapshot().Topics[0].Partitions[0].Replicas {
			if r.Node == leader {
				return r
			}
		}
		return ReplicaState{}
	}
	appendTo := func(peer string) (raftnetExchange, bool) {
		for _, x := range leaderState().Raft.Exchanges {
			if x.Kind == "append" && x.Peer == peer {
				return raftnetExchange{ok: x.OK, lost: x.Lost}, true
			}
		}
		return raftnetExchange{}, false
	}
	var followers []string
	for _, id := range c.Nodes() {
		if id != leader {
			followers = append(followers, id)
		}
	}
	waitFor(t, 5*time.Second, "appends to both followers answered", func() bool {
		a, ok1 := appendTo(followers[0])
		b, ok2 := appendTo(followers[1])
		return ok1 && ok2 && a.ok && b.ok
	})
	if st := leaderState(); st.Raft.ElectionIn != -1 {
		t.Errorf("the leader's election clock is %v; want -1", st.Raft.ElectionIn)
	}
	if err := c.Isolate(followers[0]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "appends to the isolated follower lost", func() bool {
		a, _ := appendTo(followers[0])
		b, _ := appendTo(followers[1])
		return a.lost != "" && b.ok
	})
}

type raftnetExchange struct {
	ok   bool
	lost string
}

// A new group starts on fast timeouts, so its first election does not
// wait out the classroom preset, and every replica moves to the preset
// once it has a leader. A replica restarted from its disk starts on the
// preset.
func TestNewGroupsStartQuick(t *testing.T) {
	t.Parallel()
	c := classroomOrders(t)
	settled := func() bool { return onTimeouts(c, ClassroomTiming.HeartbeatTimeout, ClassroomTiming.ElectionTimeout) }
	waitFor(t, 10*time.Second, "every replica on the classroom timeouts", settled)
	if err := c.Kill("n2"); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart("n2"); err != nil {
		t.Fatal(err)
	}
	if !settled() {
		t.Error("a restarted replica did not start on the classroom timeouts")
	}
}

// A classroom cluster can be hurried down to the fast preset's timeouts,
// every replica at once and those restarted meanwhile, and elects a new
// leader at that pace; 1 brings the classroom's back. Below the fast
// preset it refuses.
func TestRaftPaceHurries(t *testing.T) {
	t.Parallel()
	c := classroomOrders(t)
	low := c.minRaftPace()
	if want := float64(FastTiming.HeartbeatTimeout) / float64(ClassroomTiming.HeartbeatTimeout); low != want {
		t.Fatalf("MinRaftPace = %v; want %v, the fast preset's heartbeat over the classroom's", low, want)
	}
	if err := c.SetRaftPace(low); err != nil {
		t.Fatal(err)
	}
	fast := func() bool { return onTimeouts(c, FastTiming.HeartbeatTimeout, FastTiming.ElectionTimeout) }
	if !fast() {
		t.Error("hurried: a replica is not on the fast preset's timeouts")
	}
	if got := c.requestTimeout(); got != ClassroomTiming.RequestTimeout {
		t.Errorf("hurried request timeout %v; want the classroom's %v: the work is as large as ever", got, ClassroomTiming.RequestTimeout)
	}
	tp := TopicPartition{Topic: "orders"}
	leader, err := c.WaitForLeader(ctxFor(t, 10*time.Second), tp)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Kill(leader); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "a new leader at the hurried pace", func() bool {
		l := partitionState(c.Snapshot(), tp).Leader
		return l != "" && l != leader
	})
	if err := c.Restart(leader); err != nil {
		t.Fatal(err)
	}
	if !fast() {
		t.Error("a replica restarted while hurried is not on the fast preset's timeouts")
	}
	if err := c.SetRaftPace(1); err != nil {
		t.Fatal(err)
	}
	if !onTimeouts(c, ClassroomTiming.HeartbeatTimeout, ClassroomTiming.ElectionTimeout) {
		t.Error("after SetRaftPace(1) a replica is not on the classroom's timeouts")
	}
	if err := c.SetRaftPace(low / 2); !errors.Is(err, ErrInvalid) {
		t.Errorf("SetRaftPace(%v) = %v; want ErrInvalid: below the fast preset", low/2, err)
	}
}

// onTimeouts reports whether every replica of every node that is up runs
// raft on heartbeat timeout hb and election timeout el, none of them
// still on a new group's quick start.
func onTimeouts(c *Cluster, hb, el time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range c.nodeIDs {
		if !c.nodes[id].up {
			continue
		}
		for _, rep := range c.nodes[id].replicas {
			rc := rep.raft().ReloadableConfig()
			if rep.quick.Load() || rc.HeartbeatTimeout != hb || rc.ElectionTimeout != el {
				return false
			}
		}
	}
	return true
}

// classroomOrders starts a classroom-timing cluster of three nodes with a
// topic orders of one partition, closed at the end of the test.
func classroomOrders(t *testing.T) *Cluster {
	t.Helper()
	c, err := NewCluster(Config{Nodes: 3, Timing: ClassroomTiming})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 1})
	return c
}
