package broker

import (
	"sync"
	"time"
)

// sessionClock is the time group sessions and rebalance deadlines are
// measured in. Clients heartbeat on wall time, whatever the lab's clock
// does, and a Kafka client's session.timeout.ms is wall time too; but a
// session must never end sooner in lab time than it says, or a lab whose
// clock a busy machine holds back, or a paused one, would see a member
// dropped while its partition's backlog had hardly grown. So this clock
// runs at whichever is slower at each reading: wall time, or the
// cluster's clock (lab time). With the cluster on wall time it is wall
// time; paused, it stands still; at a lab speed above 1x it follows the
// wall, as the clients' heartbeats do.
type sessionClock struct {
	labNow func() time.Time

	mu        sync.Mutex
	started   bool
	wall, lab time.Time // the readings at the last call
	at        time.Time // its time at the last call
}

func newSessionClock(labNow func() time.Time) *sessionClock {
	return &sessionClock{labNow: labNow}
}

// Now advances the clock by the lesser of the wall time and the lab time
// passed since the last call, and returns it.
func (s *sessionClock) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, l := time.Now(), s.labNow()
	if !s.started {
		s.started, s.wall, s.lab, s.at = true, w, l, w
		return s.at
	}
	if d := min(w.Sub(s.wall), l.Sub(s.lab)); d > 0 {
		s.at = s.at.Add(d)
	}
	s.wall, s.lab = w, l
	return s.at
}
