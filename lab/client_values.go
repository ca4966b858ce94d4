package lab

// The lab values that add up what the background clients did: the
// retries they schedule and the throughput of their work.
//
// The retries consumers and workers schedule, and the two lab values that
// read them: retries(X), how many retries X scheduled, and retry_peak(X),
// the most of X's retries that came back within one clients.RetryWindow
// of lab time. Retries without jitter come back in waves, each as large as
// the failures that caused it; full jitter spreads them, and the peak
// shows the difference. It counts when each retry really came back, so a
// queue that ignored a nack's delay would show its burst.
//
// A retry is a failed attempt that another attempt will follow because
// the client gave the message another go: a consumer's pause before it
// tries a record again, a worker's nack that puts a message back in its
// queue (after a backoff, at once with retry=immediate, and at once with
// retry=none unless the queue's max-receives dead-letters it on that nack,
// or after the last attempt when the queue has no dead-letter queue to
// take it). A redelivery after a crash is the visibility timeout's doing,
// not a retry, and a message acked before its work is never tried again.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/clients"
	"github.com/mqlab/mqlab/lab/command"
)

// retried records a retry of a message of queue or group of, failed now.
func (w *world) retried(of, client, msgID string, attempt int, failed time.Time, delay time.Duration) {
	w.retries.Add(of, RetryState{Client: client, Message: msgID, Attempt: attempt, Failed: failed, Delay: delay})
}

// retriesFeature reads retries(X) and retry_peak(X). It has no commands.
type retriesFeature struct{}

// retryValues reads the retries that consumers and workers schedule.
var retryValues = retriesFeature{}

func (retriesFeature) exec(_ context.Context, _ *run, cmd command.Command) error {
	return fmt.Errorf("%s: the retries have no commands", cmd.Name())
}

func (retriesFeature) value(_ context.Context, w *world, v command.Value) (any, bool, error) {
	switch v.Func {
	case "retries", "retry_peak":
	default:
		return nil, false, nil
	}
	if !w.retryTarget(v.Arg) {
		names := w.retryTargets()
		there := "there are none yet; start one with worker start NAME queue=QUEUE"
		if len(names) > 0 {
			there = "there are " + strings.Join(names, ", ")
		}
		return nil, true, fmt.Errorf("%s: no worker, consumer, queue or group named %q; %s%s", v, v.Arg, there, didYouMean(v.Arg, names))
	}
	if v.Func == "retries" {
		return float64(w.retries.Total(v.Arg)), true, nil
	}
	return float64(w.retries.Peak(v.Arg, clients.RetryWindow)), true, nil
}

func (retriesFeature) observe(context.Context, *world, *checker.History, *checker.Observed) error {
	return nil
}

// retryTarget reports whether name is something retries are counted for:
// a worker, a consumer, a queue or a consumer group.
func (w *world) retryTarget(name string) bool {
	if w.groups.has(name) || w.queues.has(name) || w.isQueue(name) {
		return true
	}
	_, err := w.groups.groupState(name)
	return err == nil
}

// retryTargets lists the workers, consumers, queues and groups, sorted.
func (w *world) retryTargets() []string {
	names := append(w.groups.names(), w.queues.names()...)
	snap := w.cluster.SnapshotWindow(0)
	for _, q := range snap.Queues {
		names = append(names, q.Config.Name)
	}
	for _, g := range snap.Groups {
		names = append(names, g.Group)
	}
	slices.SortFunc(names, cmp.Compare)
	return slices.Compact(names)
}

// Values for back-pressure and capacity: throughput(X), the messages a
// group's consumers or a queue's workers finish per second of lab time,
// and members(G), how many members a group has (idle(G) counts those
// without a partition). Together they show where adding clients stops
// helping: a group never has more busy members than its topic has
// partitions, and clients that share a database cannot outrun its write
// ceiling. generation(G) numbers a group's rebalances, so a lesson can
// see that none happened.
//
// throughput(X) counts the work finished in the last clients.ThroughputWindow of
// lab time (clients.Finished): a queue's acks, a group's finished records.
// It is readable only once every client of X has run unchanged (no start,
// restart, crash or stop, and for a consumer no new group generation) for
// that long, so that a reading never mixes two set-ups: until then it is
// "not now", which a wait keeps polling through.

// backPressureFeature reads throughput(X), members(G) and generation(G).
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
	case "generation":
		gs, err := w.groups.groupState(v.Arg)
		if err != nil {
			return nil, true, notNow(fmt.Errorf("%s: %w", v, err))
		}
		return float64(gs.Generation), true, nil
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
