package raftnet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"go.uber.org/goleak"
)

// Pre-vote must stay on: raft turns it off, with only a log line, for a
// transport without RequestPreVote.
var _ raft.WithPreVote = (*Transport)(nil)

// counter is a tiny FSM: it counts applied entries.
type counter struct {
	mu       sync.Mutex
	count    uint64
	index    uint64 // last applied raft index
	restores int
}

func (c *counter) Apply(l *raft.Log) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count++
	c.index = l.Index
	return c.count
}

func (c *counter) Snapshot() (raft.FSMSnapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return counterSnapshot{count: c.count}, nil
}

func (c *counter) Restore(r io.ReadCloser) error {
	defer r.Close()
	var count uint64
	if err := binary.Read(r, binary.BigEndian, &count); err != nil {
		return fmt.Errorf("restore counter: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count = count
	c.restores++
	return nil
}

func (c *counter) state() (count uint64, restores int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count, c.restores
}

type counterSnapshot struct{ count uint64 }

func (s counterSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := binary.Write(sink, binary.BigEndian, s.count); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("persist counter: %w", err)
	}
	return sink.Close()
}

func (counterSnapshot) Release() {}

// replica is one raft server of the test group.
type replica struct {
	node  string
	raft  *raft.Raft
	fsm   *counter
	trans *Transport
}

func fastConfig(node string, logger hclog.Logger) *raft.Config {
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(node)
	conf.HeartbeatTimeout = 50 * time.Millisecond
	conf.ElectionTimeout = 50 * time.Millisecond
	conf.LeaderLeaseTimeout = 50 * time.Millisecond
	conf.CommitTimeout = 5 * time.Millisecond
	conf.SnapshotThreshold = 1 << 20 // snapshots only when the test asks
	conf.TrailingLogs = 2            // so a lagging follower needs InstallSnapshot
	conf.Logger = logger
	return conf
}

func startReplica(t *testing.T, n *Network, node string, logger hclog.Logger) *replica {
	t.Helper()
	trans, err := n.Transport(node, "g0")
	if err != nil {
		t.Fatal(err)
	}
	fsm := &counter{}
	r, err := raft.NewRaft(fastConfig(node, logger), fsm, raft.NewInmemStore(), raft.NewInmemStore(),
		raft.NewInmemSnapshotStore(), trans)
	if err != nil {
		t.Fatalf("NewRaft(%s): %v", node, err)
	}
	return &replica{node: node, raft: r, fsm: fsm, trans: trans}
}

// poll calls cond every few milliseconds until it holds or the deadline
// passes.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// leaderAmong waits for exactly one of rs to be leader and returns it.
func leaderAmong(t *testing.T, rs []*replica) *replica {
	t.Helper()
	var leader *replica
	poll(t, "a leader", func() bool {
		leader = nil
		for _, r := range rs {
			if r.raft.State() == raft.Leader {
				if leader != nil {
					return false // two claim it; wait for the stale one to step down
				}
				leader = r
			}
		}
		return leader != nil
	})
	return leader
}

func apply(t *testing.T, r *replica, entries int) {
	t.Helper()
	for i := range entries {
		if err := r.raft.Apply([]byte{byte(i)}, time.Second).Error(); err != nil {
			t.Fatalf("Apply on %s: %v", r.node, err)
		}
	}
}

func TestRaftIsolateLeaderAndRejoin(t *testing.T) {
	defer goleak.VerifyNone(t)

	n := New(Options{RPCTimeout: 200 * time.Millisecond})
	logger := hclog.NewNullLogger()
	var rs []*replica
	var servers []raft.Server
	for _, node := range []string{"n1", "n2", "n3"} {
		r := startReplica(t, n, node, logger)
		rs = append(rs, r)
		servers = append(servers, raft.Server{ID: raft.ServerID(node), Address: r.trans.LocalAddr()})
	}
	defer func() {
		for _, r := range rs {
			if err := r.raft.Shutdown().Error(); err != nil {
				t.Errorf("shutdown %s: %v", r.node, err)
			}
			_ = r.trans.Close() // raft closed it already; must be harmless
		}
	}()
	if err := rs[0].raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	old := leaderAmong(t, rs)
	t.Logf("first leader %s after %v", old.node, time.Since(start))
	apply(t, old, 10)

	// Cut the leader off; the other two must elect a new one.
	n.Isolate(old.node)
	var rest []*replica
	for _, r := range rs {
		if r != old {
			rest = append(rest, r)
		}
	}
	start = time.Now()
	leader := leaderAmong(t, rest)
	t.Logf("new leader %s after %v", leader.node, time.Since(start))
	poll(t, "old leader to step down", func() bool { return old.raft.State() != raft.Leader })

	// Commit more while the old leader is away, then compact the log so it
	// can only catch up by snapshot.
	apply(t, leader, 20)
	if err := leader.raft.Snapshot().Error(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}

	n.Heal()
	start = time.Now()
	want := leader.raft.AppliedIndex()
	poll(t, "old leader to catch up", func() bool {
		return old.raft.AppliedIndex() >= want && old.raft.State() == raft.Follower
	})
	t.Logf("old leader caught up after %v", time.Since(start))

	wantCount, _ := leader.fsm.state()
	poll(t, "old leader's FSM to match", func() bool {
		count, _ := old.fsm.state()
		return count == wantCount
	})
	if _, restores := old.fsm.state(); restores == 0 {
		t.Error("old leader caught up without InstallSnapshot; the test meant to exercise it")
	}
	if wantCount != 30 {
		t.Errorf("leader counted %d entries, want 30", wantCount)
	}
}

// syncBuffer is a log sink safe for raft's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// noPreVote hides RequestPreVote, like a transport that lacks it.
type noPreVote struct{ raft.Transport }

func TestRaftKeepsPreVote(t *testing.T) {
	defer goleak.VerifyNone(t)

	const warning = "pre-vote is disabled"
	newRaft := func(node string, trans raft.Transport) string {
		var logs syncBuffer
		logger := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})
		r, err := raft.NewRaft(fastConfig(node, logger), &counter{}, raft.NewInmemStore(), raft.NewInmemStore(),
			raft.NewInmemSnapshotStore(), trans)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Shutdown().Error(); err != nil {
			t.Fatal(err)
		}
		return logs.String()
	}

	n := New(Options{})
	t1, err := n.Transport("n1", "g0")
	if err != nil {
		t.Fatal(err)
	}
	if logs := newRaft("n1", t1); strings.Contains(logs, warning) {
		t.Fatalf("raft disabled pre-vote with our transport:\n%s", logs)
	}

	// The check above means something only if raft does warn otherwise.
	t2, err := n.Transport("n2", "g0")
	if err != nil {
		t.Fatal(err)
	}
	defer t2.Close()
	if logs := newRaft("n2", noPreVote{t2}); !strings.Contains(logs, warning) {
		t.Fatalf("expected raft to warn about %q for a transport without pre-vote; logs:\n%s", warning, logs)
	}
}
