package broker

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/hashicorp/raft"
)

// Timing is a preset of raft timeouts. Fast suits tests and scripts; the
// classroom preset is slow enough for a person to watch an election.
type Timing struct {
	Name string
	// HeartbeatTimeout is how long a follower waits without hearing from a
	// leader before it starts an election (raft randomises it to [t, 2t)).
	HeartbeatTimeout time.Duration
	// ElectionTimeout is how long a candidate waits for votes.
	ElectionTimeout time.Duration
	// LeaderLeaseTimeout is how long a leader that hears from no quorum
	// keeps acting as leader. An isolated leader accepts acks=1 writes until
	// it runs out.
	LeaderLeaseTimeout time.Duration
	// CommitTimeout bounds how long a leader waits before it replicates.
	CommitTimeout time.Duration
	// RPCTimeout is how long a raft RPC to an unresponsive peer waits.
	RPCTimeout time.Duration
	// RequestTimeout is how long a client waits for one request.
	RequestTimeout time.Duration
	// SnapshotInterval and SnapshotThreshold decide when a replica
	// snapshots its state so its raft log can be compacted.
	SnapshotInterval  time.Duration
	SnapshotThreshold uint64
	// TrailingLogs is how many raft entries stay behind a snapshot, so a
	// slightly lagging follower catches up without a snapshot transfer.
	TrailingLogs uint64
	// SessionTimeout is a consumer group member's default session: the
	// coordinator drops a member it has not heard from for this long.
	SessionTimeout time.Duration
}

// FastTiming is for tests and scripts: a failover in under a second.
//
// Its raft timeouts are the shortest that hold on a busy two-core machine.
// A process starved of CPU for longer than the leader lease loses its
// leaders, and one starved for longer than the heartbeat timeout has its
// followers start elections: an idle cluster then changes leaders and
// epochs that nobody asked it to change. Four idle three-node clusters
// beside a CPU hog (BenchmarkIdleElections) held, in 15 s, 4 to 16
// elections at 100 ms and none at 200 ms; with the race detector on, 96
// at 100 ms, 5 to 9 at 200 ms and none at 300 ms. 200 ms holds where the
// tests run without the race detector, and every test, kill and
// failover scene pays for each step up: at 300 ms the test suite took a
// third longer.
var FastTiming = Timing{
	Name:               "fast",
	HeartbeatTimeout:   200 * time.Millisecond,
	ElectionTimeout:    200 * time.Millisecond,
	LeaderLeaseTimeout: 200 * time.Millisecond,
	CommitTimeout:      5 * time.Millisecond,
	RPCTimeout:         200 * time.Millisecond,
	RequestTimeout:     2 * time.Second,
	SnapshotInterval:   500 * time.Millisecond,
	SnapshotThreshold:  1024,
	TrailingLogs:       512,
	SessionTimeout:     time.Second,
}

// ClassroomTiming stretches elections to about a second so a class can
// watch a leader die and another take over.
var ClassroomTiming = Timing{
	Name:               "classroom",
	HeartbeatTimeout:   1000 * time.Millisecond,
	ElectionTimeout:    1000 * time.Millisecond,
	LeaderLeaseTimeout: 500 * time.Millisecond,
	CommitTimeout:      20 * time.Millisecond,
	RPCTimeout:         1500 * time.Millisecond,
	RequestTimeout:     8 * time.Second,
	SnapshotInterval:   5 * time.Second,
	SnapshotThreshold:  1024,
	TrailingLogs:       512,
	SessionTimeout:     10 * time.Second,
}

// TimingByName returns a preset by its name.
func TimingByName(name string) (Timing, error) {
	switch name {
	case "fast", "":
		return FastTiming, nil
	case "classroom":
		return ClassroomTiming, nil
	}
	return Timing{}, fmt.Errorf("unknown timing %q: want fast or classroom", name)
}

func (t Timing) validate() error {
	if t.HeartbeatTimeout <= 0 || t.ElectionTimeout <= 0 || t.LeaderLeaseTimeout <= 0 || t.CommitTimeout <= 0 {
		return fmt.Errorf("timing %q: every raft timeout must be positive", t.Name)
	}
	if t.ElectionTimeout < t.HeartbeatTimeout {
		return fmt.Errorf("timing %q: election timeout %v is below heartbeat timeout %v; raft needs election ≥ heartbeat", t.Name, t.ElectionTimeout, t.HeartbeatTimeout)
	}
	if t.LeaderLeaseTimeout > t.HeartbeatTimeout {
		return fmt.Errorf("timing %q: leader lease %v exceeds heartbeat timeout %v; raft needs lease ≤ heartbeat", t.Name, t.LeaderLeaseTimeout, t.HeartbeatTimeout)
	}
	if t.RPCTimeout <= 0 || t.RequestTimeout <= 0 || t.SessionTimeout <= 0 {
		return fmt.Errorf("timing %q: RPC, request and session timeouts must be positive", t.Name)
	}
	return nil
}

// Raft's pace. A lab slowed below real time (speed 0.25x) would otherwise
// show elections a quarter as long in lab time as its timing preset says,
// and a class could not slow one down to watch it. SetRaftPace stretches
// every raft group's heartbeat and election timeouts, and a client's
// request timeout with them, live: hashicorp/raft's ReloadConfig takes the
// two timeouts. A factor below 1 hurries a slow preset down to the fast
// one's timeouts, for work nobody watches (a lesson replaying its earlier
// steps). The leader lease cannot be reloaded and must stay at most the
// heartbeat timeout, so every replica keeps the fast preset's lease (or
// its own preset's, when shorter); leaders renew it on every replication
// round, tens of milliseconds apart at any pace.

// MaxRaftPace bounds SetRaftPace: ten times the classroom preset is
// already ten seconds without a heartbeat.
const MaxRaftPace = 10

// minRaftPace is the lowest factor SetRaftPace takes: the one that brings
// the cluster's preset down to the fast preset's timeouts.
func (c *Cluster) minRaftPace() float64 { return c.timing.Hurried() }

// Hurried is the raft pace that brings t down to the fast preset's
// timeouts (1 for the fast preset itself).
func (t Timing) Hurried() float64 {
	return min(1, float64(FastTiming.HeartbeatTimeout)/float64(t.HeartbeatTimeout))
}

// SetRaftPace sets raft's heartbeat and election timeouts, and clients'
// request timeouts, to factor times the timing preset's, on every replica
// now and every one started later. 1 restores the preset. When the pace
// slows, followers move first, so none times out waiting for the quick
// heartbeats of a leader that has already slowed; when it hurries,
// leaders move first.
func (c *Cluster) SetRaftPace(factor float64) error {
	if err := c.validPace(factor); err != nil {
		return err
	}
	slower := factor > c.RaftPace()
	c.pace.Store(math.Float64bits(factor))
	c.mu.Lock()
	var leaders, followers []*replica
	for _, id := range c.nodeIDs {
		for _, rep := range c.nodes[id].replicas {
			if r := rep.raft(); r != nil && r.State() == raft.Leader {
				leaders = append(leaders, rep)
			} else {
				followers = append(followers, rep)
			}
		}
	}
	c.mu.Unlock()
	order := append(leaders, followers...)
	if slower {
		order = append(followers, leaders...)
	}
	var errs []error
	for _, rep := range order {
		r := rep.raft()
		if r == nil {
			continue
		}
		rc := r.ReloadableConfig()
		rc.HeartbeatTimeout = c.paced(c.timing.HeartbeatTimeout)
		rc.ElectionTimeout = c.paced(c.timing.ElectionTimeout)
		if err := r.ReloadConfig(rc); err != nil && !errors.Is(err, raft.ErrRaftShutdown) {
			errs = append(errs, fmt.Errorf("%s on %s: %w", rep.group, rep.node, err))
		}
	}
	return errors.Join(errs...)
}

func (c *Cluster) validPace(factor float64) error {
	if low := c.minRaftPace(); math.IsNaN(factor) || factor < low || factor > MaxRaftPace {
		return fmt.Errorf("%w: raft pace %v; want %s to %d times the %s preset", ErrInvalid, factor,
			strconv.FormatFloat(low, 'f', -1, 64), MaxRaftPace, c.timing.Name)
	}
	return nil
}

// RaftPace is the factor SetRaftPace set (1 when it was never called).
func (c *Cluster) RaftPace() float64 {
	if f := math.Float64frombits(c.pace.Load()); f > 0 {
		return f
	}
	return 1
}

// paced stretches one of the preset's durations by the raft pace.
func (c *Cluster) paced(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.RaftPace())
}

// requestTimeout is how long a client waits for one request: stretched
// with raft's pace, never hurried below the preset's, since the work a
// hurried lab does is as large as ever.
func (c *Cluster) requestTimeout() time.Duration {
	return time.Duration(float64(c.timing.RequestTimeout) * max(1, c.RaftPace()))
}

// leaderLease is every replica's leader lease (see SetRaftPace).
func (c *Cluster) leaderLease() time.Duration {
	return min(c.timing.LeaderLeaseTimeout, FastTiming.LeaderLeaseTimeout)
}

// A new raft group's first election. At classroom timing it takes one to
// two seconds, for every group a lesson step creates before the learner
// sees anything: a step's set-up took 3 to 8 s. A brand-new group starts
// on fast timing's heartbeat and election timeouts instead, and moves to
// its own once it has a leader. Replicas that restart from a disk start
// on their group's timing as before.

// quickStart reports whether a new group's replica with conf starts on
// fast timeouts, and sets them in conf.
func (c *Cluster) quickStart(conf *raft.Config) bool {
	if conf.HeartbeatTimeout <= FastTiming.HeartbeatTimeout {
		return false
	}
	conf.HeartbeatTimeout, conf.ElectionTimeout = FastTiming.HeartbeatTimeout, FastTiming.ElectionTimeout
	return true
}

// settle moves a group that has just elected its first leader, on
// leader, to its own timeouts: the followers first, so none is left
// expecting the quick heartbeats of a leader that no longer sends them.
func (c *Cluster) settle(group, leader string) {
	var followers []*replica
	var lead *replica
	c.mu.Lock()
	for _, id := range c.nodeIDs {
		if rep := c.nodes[id].replicas[group]; rep != nil && rep.quick.Load() {
			if id == leader {
				lead = rep
			} else {
				followers = append(followers, rep)
			}
		}
	}
	c.mu.Unlock()
	for _, rep := range append(followers, lead) {
		if rep == nil {
			continue
		}
		if r := rep.raft(); r != nil {
			rc := r.ReloadableConfig()
			rc.HeartbeatTimeout = c.paced(c.timing.HeartbeatTimeout)
			rc.ElectionTimeout = c.paced(c.timing.ElectionTimeout)
			if err := r.ReloadConfig(rc); err != nil {
				c.logf("settle %s on %s: %v", group, rep.node, err)
				continue
			}
		}
		rep.quick.Store(false)
	}
}
