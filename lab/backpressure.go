package lab

// Values for back-pressure and capacity: throughput(X), the messages a
// group's consumers or a queue's workers finish per second of lab time,
// and members(G), how many members a group has (idle(G) counts those
// without a partition). Together they show where adding clients stops
// helping: a group never has more busy members than its topic has
// partitions, and clients that share a database cannot outrun its write
// ceiling.
//
// throughput(X) counts the work finished in the last clients.ThroughputWindow of
// lab time (clients.Finished): a queue's acks, a group's finished records.
// It is readable only once every client of X has run unchanged (no start,
// restart, crash or stop, and for a consumer no new group generation) for
// that long, so that a reading never mixes two set-ups: until then it is
// "not now", which a wait keeps polling through.

import (
	"context"
	"fmt"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/clients"
	"github.com/mqlab/mqlab/lab/command"
)

// backPressureFeature reads throughput(X) and members(G).
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
			if err := w.queues.settled(v, now); err != nil {
				return nil, true, err
			}
			return w.queues.finished.PerSecond(v.Arg, now), true, nil
		}
		if !w.groups.serving(v.Arg) {
			if _, err := w.groups.groupState(v.Arg); err != nil {
				return nil, true, notNow(fmt.Errorf("%s: %w %q, and no consumer group of that name yet: %v", v, broker.ErrUnknownQueue, v.Arg, err))
			}
		}
		if err := w.groups.settled(v, now); err != nil {
			return nil, true, err
		}
		return w.groups.done.PerSecond(v.Arg, now), true, nil
	case "members":
		gs, err := w.groups.groupState(v.Arg)
		if err != nil {
			// Not yet: a consumer may be about to join it.
			return nil, true, notNow(fmt.Errorf("%s: %w", v, err))
		}
		n := 0
		for _, m := range gs.Members {
			if !m.Joining {
				n++
			}
		}
		return float64(n), true, nil
	}
	return nil, false, nil
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

// settled is nil once every client of v.Arg has run unchanged for a
// clients.ThroughputWindow, and not now before.
func (s *clientSet[C]) settled(v command.Value, now time.Time) error {
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
	if ago := now.Sub(last); lastName != "" && ago < clients.ThroughputWindow {
		return notNow(fmt.Errorf("%s: measuring: %s changed %.2fs of lab time ago, and a reading needs %v with the same clients",
			v, lastName, ago.Seconds(), clients.ThroughputWindow))
	}
	return nil
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
