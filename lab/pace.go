package lab

import (
	"fmt"

	"github.com/mqlab/mqlab/broker"
)

// raftPace is how much a lab speed below real time stretches raft's
// timeouts: at 0.25x four times, so that an election lasts as long in lab
// time as the timing preset says and a class sees it slowly. Faster than
// real time raft keeps its preset (making it faster would starve it), up
// to the broker's bound when slowed a great deal.
func raftPace(speed float64) float64 {
	if speed <= 0 || speed >= 1 {
		return 1
	}
	return min(1/speed, broker.MaxRaftPace)
}

// Hurry, while on, runs raft on the fast preset's heartbeat and election
// timeouts whatever the lab's timing and speed, on this cluster and on
// any the cluster command starts meanwhile: for work nobody watches, such
// as a lesson re-running its earlier steps on a fresh cluster, where a
// classroom election would keep the learner waiting for a scene already
// seen. Off gives raft the pace the lab's timing and speed ask for.
// Consumers started while hurried join with the fast preset's session
// (groupSet.sessionFor); clients' request timeouts keep the lab's timing.
func (l *Lab) Hurry(on bool) error {
	l.hurry.Store(on)
	w, err := l.world()
	if err != nil {
		return err
	}
	if err := l.pace(w); err != nil {
		return fmt.Errorf("hurry: %w", err)
	}
	return nil
}

// pace sets raft's pace on w's cluster from the lab's speed and Hurry.
func (l *Lab) pace(w *world) error {
	if l.hurry.Load() {
		return w.cluster.SetRaftPace(w.cluster.MinRaftPace())
	}
	factor, _ := l.clock.Speed()
	return w.cluster.SetRaftPace(raftPace(factor))
}
