package challenge

// The faults a challenge's schedule draws, and when each comes due.

// trigger is one fault of the schedule: once the program has reported
// after lines, the first moment the fault can happen, it does.
type trigger struct {
	after int
	kind  string // a fault kind: see the Fault constants
	fired bool
	// losing is, for effect-ahead, the client whose commits the lab loses
	// ("" until the trigger comes due); lost counts them and stop ends it.
	losing string
	lost   func() int
	stop   func()
}

// The kinds of fault a challenge's schedule draws from.
const (
	// FaultCommitAhead kills the program when its group has committed
	// more than it has reported finished: what a consumer that commits
	// before its work is caught by.
	FaultCommitAhead = "commit-ahead"
	// FaultEffectAhead kills the program once a commit it sent after an
	// effect is lost on the way: from the moment the fault comes due, every
	// commit the program sends is lost, until the kill.
	FaultEffectAhead = "effect-ahead"
	// FaultLeader kills the leader of the topic's first partition and
	// restarts it half a second later.
	FaultLeader = "leader"
	// FaultPause pauses the program in the middle of its work, as a long
	// garbage-collection pause would, starts another run that takes its
	// partitions, and lets the paused one go on once the group has moved
	// past it: a zombie holding records it fetched before the pause.
	FaultPause = "pause"
	// FaultBetweenWrites kills the program right after the first commit
	// to its database that names an order the database did not name
	// before: an order whose effect is two writes, each committed alone,
	// is left with the first only. See between.go.
	FaultBetweenWrites = "between-writes"
)

// schedule draws the run's faults from its seed, each after a number of
// reported lines in the first three quarters of the workload (a pause in
// its first half, so that work is left to hold).
func (r *runner) schedule() []*trigger {
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
