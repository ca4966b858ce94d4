package lab

// Values for back-pressure and capacity: throughput(X), the messages a
// group's consumers or a queue's workers finish per second of lab time,
// and members(G) and idle(G), how many of a group's members hold a
// partition. Together they show where adding clients stops helping: a
// group never has more busy members than its topic has partitions, and
// clients that share a database cannot outrun its write ceiling.
//
// throughput(X) counts the work finished in the last throughputWindow of
// lab time. It is readable only once every client of X has run unchanged
// (no start, restart, crash or stop) for that long, so that a reading
// never mixes two set-ups: until then it is "not now", which a wait keeps
// polling through.

import (
	"context"
	"fmt"
	"time"

	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
)

// throughputWindow is the lab time throughput(X) counts over.
const throughputWindow = time.Second

// backPressureFeature reads throughput(X), members(G) and idle(G).
type backPressureFeature struct{}

// backPressure is the family of the back-pressure values.
var backPressure = backPressureFeature{}

func (backPressureFeature) exec(_ context.Context, _ *run, cmd command.Command) error {
	return fmt.Errorf("%s: the back-pressure values run no commands", cmd.Name())
}

func (backPressureFeature) observe(context.Context, *world, *checker.History, *checker.Observed) error {
	return nil
}

func (backPressureFeature) value(_ context.Context, w *world, v command.Value) (any, bool, error) {
	switch v.Func {
	case "throughput":
		now := w.queues.l.clock.Now()
		if w.isQueue(v.Arg) {
			r, err := w.queues.throughput(v, now)
			return r, true, err
		}
		if w.groups.serving(v.Arg) {
			r, err := w.groups.throughput(v, now)
			return r, true, err
		}
		if _, err := w.groups.groupState(v.Arg); err != nil {
			return nil, true, notNow{fmt.Errorf("%s: no consumer group or queue named %s yet; %w", v, v.Arg, err)}
		}
		r, err := w.groups.throughput(v, now)
		return r, true, err
	case "members", "idle":
		gs, err := w.groups.groupState(v.Arg)
		if err != nil {
			// Not yet: a consumer may be about to join it.
			return nil, true, notNow{fmt.Errorf("%s: %w", v, err)}
		}
		n := 0
		for _, m := range gs.Members {
			switch {
			case m.Joining:
			case v.Func == "members", m.Idle:
				n++
			}
		}
		return float64(n), true, nil
	}
	return nil, false, nil
}

// finishedLocked notes one message's work finished at now for a group or
// queue, and forgets what throughput(X) no longer counts. s.mu is held.
func (s *clientSet[C]) finishedLocked(of string, now time.Time) {
	ts := append(s.finished[of], now)
	cut := 0
	for cut < len(ts) && now.Sub(ts[cut]) > throughputWindow {
		cut++
	}
	s.finished[of] = ts[cut:]
}

// changedLocked notes that the client started, crashed or stopped just now.
// c.mu is held.
func (c *clientCore) changedLocked() {
	if c.clock != nil {
		c.since = c.clock.Now()
	}
}

// serves is the group a consumer reads for.
func (cc *consumerClient) serves() string { return cc.command().Group }

// serves is the queue a worker works on.
func (wk *worker) serves() string { return wk.command().Queue }

// core is the consumer's state shared with workers.
func (cc *consumerClient) core() *clientCore { return &cc.clientCore }

// core is the worker's state shared with consumers.
func (wk *worker) core() *clientCore { return &wk.clientCore }

// servingClient is a consumer or worker as throughput(X) reads it.
type servingClient interface {
	serves() string
	core() *clientCore
}

// serving says whether one of the set's clients (running or not) serves of.
func (s *clientSet[C]) serving(of string) bool {
	for _, name := range s.names() {
		if c, ok := any(s.get(name)).(servingClient); ok && c.serves() == of {
			return true
		}
	}
	return false
}

// throughput is what the set's clients of v.Arg finished per second over
// the last throughputWindow, or not now while a client of it changed less
// than a window ago.
func (s *clientSet[C]) throughput(v command.Value, now time.Time) (float64, error) {
	of := v.Arg
	var last time.Time
	lastName := ""
	for _, name := range s.names() {
		c, ok := any(s.get(name)).(servingClient)
		if !ok || c.serves() != of {
			continue
		}
		core := c.core()
		core.mu.Lock()
		since := core.since
		core.mu.Unlock()
		if since.After(last) {
			last, lastName = since, name
		}
	}
	if ago := now.Sub(last); lastName != "" && ago < throughputWindow {
		return 0, notNow{fmt.Errorf("%s: measuring: %s changed %.2fs of lab time ago, and a reading needs %v with the same clients",
			v, lastName, ago.Seconds(), throughputWindow)}
	}
	s.mu.Lock()
	n := 0
	for _, t := range s.finished[of] {
		if now.Sub(t) <= throughputWindow {
			n++
		}
	}
	s.mu.Unlock()
	return float64(n) / throughputWindow.Seconds(), nil
}

// noteGeneration counts a new group generation, seen at a poll, as a
// change of the consumer: its partitions may have moved, so a throughput
// reading starts afresh.
func (ru *consumerRun) noteGeneration(gen int) {
	if gen == ru.seenGen {
		return
	}
	ru.seenGen = gen
	c := &ru.cc.clientCore
	c.mu.Lock()
	c.changedLocked()
	c.mu.Unlock()
}
