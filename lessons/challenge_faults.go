package lessons

// The faults a challenge's schedule draws, and when each comes due.

import (
	"time"

	"github.com/mqlab/mqlab/lab"
)

// trigger is one fault of the schedule: once the program has reported
// after lines, the first moment the fault can happen, it does.
type trigger struct {
	after  int
	kind   string // a fault kind: see the Fault constants
	fired  bool
	slowed string // effect-ahead: the coordinator slowed for it, "" until then
}

// The kinds of fault a challenge's schedule draws from.
const (
	// FaultCommitAhead kills the program when its group has committed
	// more than it has reported finished: what a consumer that commits
	// before its work is caught by.
	FaultCommitAhead = "commit-ahead"
	// FaultEffectAhead kills the program just after it reports an effect,
	// with the commit that follows it lost on the way.
	FaultEffectAhead = "effect-ahead"
	// FaultLeader kills the leader of the topic's first partition and
	// restarts it half a second later.
	FaultLeader = "leader"
	// FaultPause pauses the program in the middle of its work, as a long
	// garbage-collection pause would, starts another run that takes its
	// partitions, and lets the paused one go on once the group has moved
	// past it: a zombie holding records it fetched before the pause.
	FaultPause = "pause"
)

// effectWindow is the latency the group's coordinator gets while an
// effect-ahead kill waits for its moment: a commit sent just after an
// effect is still on its way when the lab acts on the effect's line.
const effectWindow = 20 * time.Millisecond

// coordinator is the node coordinating the challenge's group, or "".
func (r *challengeRun) coordinator(snap lab.Snapshot) string {
	for _, g := range snap.Cluster.Groups {
		if g.Group == r.ch.Group {
			return g.Coordinator
		}
	}
	return ""
}

// schedule draws the run's faults from its seed, each after a number of
// reported lines in the first three quarters of the workload (a pause in
// its first half, so that work is left to hold).
func (r *challengeRun) schedule() []*trigger {
	n := len(r.rec.Sent)
	var ts []*trigger
	for _, kind := range r.ch.Faults {
		span := n * 3 / 4
		if kind == FaultPause {
			span = n / 2
		}
		ts = append(ts, &trigger{kind: kind, after: 1 + r.rng.IntN(max(1, span))})
	}
	return ts
}

// due is the first trigger of kind not fired yet whose turn has come.
func due(ts []*trigger, kind string, reported int) *trigger {
	for _, t := range ts {
		if t.kind == kind && !t.fired && reported >= t.after {
			return t
		}
	}
	return nil
}
