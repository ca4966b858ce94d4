package broker

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/raft"
)

// Raft's pace. A lab slowed below real time (speed 0.25x) would otherwise
// show elections a quarter as long in lab time as its timing preset says,
// and a class could not slow one down to watch it. SetRaftPace stretches
// every raft group's heartbeat and election timeouts, and a client's
// request timeout with them, live: hashicorp/raft's ReloadConfig takes the
// two timeouts. The leader lease stays the preset's, which is at most the
// heartbeat timeout as raft requires, so only stretching (a factor of at
// least 1) is allowed.

// MaxRaftPace bounds SetRaftPace: ten times the classroom preset is
// already ten seconds without a heartbeat.
const MaxRaftPace = 10

// SetRaftPace sets raft's heartbeat and election timeouts, and clients'
// request timeouts, to factor times the timing preset's, on every replica
// now and every one started later. 1 restores the preset.
func (c *Cluster) SetRaftPace(factor float64) error {
	if math.IsNaN(factor) || factor < 1 || factor > MaxRaftPace {
		return fmt.Errorf("%w: raft pace %v; want 1 to %d times the timing preset", ErrInvalid, factor, MaxRaftPace)
	}
	c.pace.Store(math.Float64bits(factor))
	c.mu.Lock()
	var reps []*replica
	for _, id := range c.nodeIDs {
		for _, rep := range c.nodes[id].replicas {
			reps = append(reps, rep)
		}
	}
	c.mu.Unlock()
	var errs []error
	for _, rep := range reps {
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

// RaftPace is the factor SetRaftPace set (1 when it was never called).
func (c *Cluster) RaftPace() float64 {
	if f := math.Float64frombits(c.pace.Load()); f >= 1 {
		return f
	}
	return 1
}

// paced stretches one of the preset's durations by the raft pace.
func (c *Cluster) paced(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.RaftPace())
}

// requestTimeout is how long a client waits for one request, at the
// raft pace.
func (c *Cluster) requestTimeout() time.Duration { return c.paced(c.timing.RequestTimeout) }

// A new raft group's first election. At classroom timing it takes one to
// two seconds, for every group a lesson step creates before the learner
// sees anything: a step's set-up took 3 to 8 s. A brand-new group starts
// on fast timing's heartbeat and election timeouts instead, and moves to
// its own once it has a leader. Its leader lease is the shorter of the
// two presets' for good, since raft cannot reload it and it must not
// exceed the heartbeat timeout. Replicas that restart from a disk start
// on their group's timing as before.

// quickStart reports whether a new group's replica with conf starts on
// fast timeouts, and sets them in conf.
func (c *Cluster) quickStart(conf *raft.Config) bool {
	if conf.HeartbeatTimeout <= FastTiming.HeartbeatTimeout {
		return false
	}
	conf.HeartbeatTimeout, conf.ElectionTimeout = FastTiming.HeartbeatTimeout, FastTiming.ElectionTimeout
	conf.LeaderLeaseTimeout = min(conf.LeaderLeaseTimeout, FastTiming.LeaderLeaseTimeout)
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
