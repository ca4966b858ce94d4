package lab

// stall: a consumer that freezes for a while, as a process in a long
// garbage-collection pause does. Its heartbeats stop and its loop polls
// and works on nothing until the stall is over; the group drops it if the
// stall outlasts its session timeout, and it joins again as a new member
// once it goes on. A learner choosing a session timeout weighs this
// against a crash, which the group notices only when the session runs out.

import (
	"fmt"
	"sync"
	"time"

	"github.com/mqlab/mqlab/lab/command"
)

// stallState is a consumer run's stall, if any.
type stallState struct {
	mu    sync.Mutex
	until time.Time // lab time the stall ends; zero when not stalled
}

func (s *stallState) set(until time.Time) {
	s.mu.Lock()
	s.until = until
	s.mu.Unlock()
}

// clear ends the stall that was to end at until, unless a later one
// replaced it.
func (s *stallState) clear(until time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.until.Equal(until) {
		return false
	}
	s.until = time.Time{}
	return true
}

func (s *stallState) end() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.until
}

// waitStall holds the run's loop while it is stalled.
func (ru *consumerRun) waitStall() {
	for {
		until := ru.stalled.end()
		if until.IsZero() || !ru.clock.Now().Before(until) {
			return
		}
		if ru.clock.SleepUntil(ru.soft, until) != nil {
			return
		}
	}
}

// stall freezes a running consumer for c.For of lab time. It returns at
// once; the timeline says when the consumer goes on.
func (g *groupSet) stall(r *run, c command.Stall) error {
	cc := g.get(c.Client)
	if cc == nil {
		names := g.names()
		return fmt.Errorf("stall: no consumer named %q; stall freezes a consumer client (consumer start NAME makes one)%s", c.Client, didYouMean(c.Client, names))
	}
	ru := cc.current()
	if state := cc.stateNow(); state != ClientUp || ru == nil {
		return fmt.Errorf("stall %s: it is %s; only a running consumer can stall (consumer restart %s brings it back)", c.Client, state, c.Client)
	}
	r.begin(c.String())
	until := g.l.clock.Now().Add(c.For)
	ru.stalled.set(until)
	ru.cn.StopHeartbeats()
	r.say(EventOutcome, "%s stalls for %v: no heartbeat, no poll, no work; its session timeout is %v",
		c.Client, c.For, ru.session)
	go func() {
		if ru.clock.SleepUntil(ru.hard, until) != nil {
			return
		}
		if !ru.stalled.clear(until) {
			return // a later stall took over
		}
		ru.cn.ResumeHeartbeats()
		g.l.tl.Add(Event{Time: g.l.clock.Now(), Kind: EventClient, Text: fmt.Sprintf("%s goes on after its %v stall", c.Client, c.For)})
	}()
	return nil
}
