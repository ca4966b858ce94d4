package broker

import (
	"fmt"
	"time"
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
}

// FastTiming is for tests and scripts: elections in tens of milliseconds.
var FastTiming = Timing{
	Name:               "fast",
	HeartbeatTimeout:   100 * time.Millisecond,
	ElectionTimeout:    100 * time.Millisecond,
	LeaderLeaseTimeout: 100 * time.Millisecond,
	CommitTimeout:      5 * time.Millisecond,
	RPCTimeout:         200 * time.Millisecond,
	RequestTimeout:     2 * time.Second,
	SnapshotInterval:   500 * time.Millisecond,
	SnapshotThreshold:  1024,
	TrailingLogs:       512,
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
	if t.RPCTimeout <= 0 || t.RequestTimeout <= 0 {
		return fmt.Errorf("timing %q: RPC and request timeouts must be positive", t.Name)
	}
	return nil
}
