package lab

// What a running service gets from the lab (services.Env): a publisher that
// produces or sends as a client of the service's name, the clock, and a
// sink into the timeline and the checker's effects; payments as checkout
// calls it; and the orders service's outbox relay, which runs in lab time.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/services"
)

// The outbox relay: it runs when an order is placed or the service
// restarts, and after a failed pass retries with a backoff in lab time.
const (
	relayBatch    = 100
	relayRetryMin = 100 * time.Millisecond
	relayRetryMax = 5 * time.Second
)

// env is what a service gets from the lab: a publisher that produces as a
// client of its name, the lab's clock and sleeper, and a sink into the
// timeline and the checker's effects.
func (s *serviceSet) env(name string) services.Env {
	return services.Env{
		Publisher: s.publisher(name),
		Clock:     s.l.clock.Now,
		Sleeper:   services.SleepFunc(s.l.clock.Sleep),
		Sink:      s.sink,
	}
}

// sink takes every event a service reports, from whatever goroutine the
// service runs on.
func (s *serviceSet) sink(e services.Event) {
	if e.Kind == services.EventEffect && e.MessageID != "" {
		s.mu.Lock()
		s.effects = append(s.effects, checker.Effect{Service: e.Service, Kind: effectKind(e.Service), MsgID: e.MessageID})
		s.mu.Unlock()
	}
	s.l.addService(s.w, e)
}

// effectKind names what a service's effect is, for the checker.
func effectKind(service string) string {
	switch service {
	case "payments":
		return "charge"
	case "wallet":
		return "credit"
	}
	return "effect"
}

var sqlLineBreaks = regexp.MustCompile(`\s*\n\s*`)

// addService puts one service event in the timeline, unless its world has
// been retired.
func (l *Lab) addService(w *world, e services.Event) {
	kind := EventService
	if e.Kind == services.EventSQL {
		kind = EventSQL
	}
	se := &ServiceEvent{Service: e.Service, DB: e.DB, Kind: string(e.Kind), SQL: e.SQL, Args: e.Args, RowsAffected: e.RowsAffected,
		Rows: e.Rows, MsgID: e.MessageID, Key: e.Key, Detail: e.Detail, Err: e.Err}
	text := sqlLineBreaks.ReplaceAllString(e.String(), " ")
	detail := w.buyers.Quiet(e.Service, e.Kind)
	l.addFor(w, Event{Time: e.Time, Kind: kind, Text: text, Detail: detail || w.loads.FromLoad(e.MessageID) || w.loads.FromLoad(e.Cause), Service: se})
}

// publisher sends a service's messages with a lab producer client named
// after the service, acks=all, keeping the service's message id and key.
// Each one goes into the history as a produce.
func (s *serviceSet) publisher(name string) services.Publisher {
	return services.PublisherFunc(func(ctx context.Context, dest string, m services.Message) (services.Outcome, error) {
		w := s.w
		if w.isQueue(dest) {
			return w.queues.publish(ctx, name, dest, m)
		}
		if _, err := w.topic(dest); err != nil {
			if name == "checkout" {
				return services.Failed, fmt.Errorf("%w %q: create it with queue create %s (the lab creates no queue for the checkout service)",
					broker.ErrUnknownQueue, dest, dest)
			}
			return services.Failed, fmt.Errorf("%w %q: create it with topic create %s partitions=1 (the lab creates no topic for the %s service)",
				broker.ErrUnknownTopic, dest, dest, name)
		}
		ctx, cancel := w.bind(ctx)
		defer cancel()
		_, p, err := w.producer(ctx, name, producerKey{acks: broker.AcksAll})
		if err != nil {
			return services.Failed, err
		}
		now := s.l.clock.Now()
		rec := &Produce{MsgID: m.ID, Client: name, Topic: dest, Key: m.Key, Keyed: m.Key != "", Value: m.Value, Acks: "all",
			Partition: -1, Offset: -1, Outcome: checker.Pending, Sent: now}
		w.mu.Lock()
		w.history = append(w.history, rec)
		rec.Seq = len(w.history)
		w.mu.Unlock()
		msg := broker.Message{Topic: dest, Value: []byte(m.Value), MsgID: m.ID}
		if m.Key != "" {
			msg.Key = []byte(m.Key)
		}
		res := p.Produce(ctx, msg)
		w.settle([]*Produce{rec}, res, s.l.clock.Now())
		switch res[0].Outcome {
		case broker.OutcomeAcked:
			return services.Acknowledged, nil
		case broker.OutcomeUnknown:
			return services.Unknown, res[0].Err
		}
		return services.Failed, res[0].Err
	})
}

// lastProduce finds where a service's last publish of a message went.
func (w *world) lastProduce(client, msgID string) (Produce, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.history) - 1; i >= 0; i-- {
		if p := w.history[i]; p.Client == client && p.MsgID == msgID {
			return *p, true
		}
	}
	return Produce{}, false
}

// paymentsNow charges through whichever payments service runs when the
// charge is made, so checkout survives payments being stopped and started.
type paymentsNow struct{ s *serviceSet }

func (p paymentsNow) Charge(ctx context.Context, r services.ChargeRequest) (services.ChargeResult, error) {
	rs := p.s.get("payments")
	if rs == nil {
		return services.ChargeResult{}, fmt.Errorf("payments: %w: %s", services.ErrNotRunning, p.s.notRunning("payments"))
	}
	return rs.svc.(*services.Payments).Charge(ctx, r)
}

// --- the outbox relay

// relay is the goroutine that runs an outbox's relay passes. It is owned
// by the service set: stop ends it and waits.
type relay struct {
	kick   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *serviceSet) startRelay(o *services.Orders) *relay {
	ctx, cancel := context.WithCancel(s.w.ctx)
	rl := &relay{kick: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go s.runRelay(ctx, o, rl)
	return rl
}

// poke asks for a pass soon; pokes while a pass runs add up to one more.
func (rl *relay) poke() {
	select {
	case rl.kick <- struct{}{}:
	default:
	}
}

func (rl *relay) stop() {
	rl.cancel()
	<-rl.done
}

// runRelay runs a pass whenever it is poked. A pass that fails (the topic
// missing, the broker unreachable) is retried after a backoff in lab time;
// a crashed service waits for its restart's poke. An idle relay runs no SQL,
// so the timeline shows the passes that matter.
func (s *serviceSet) runRelay(ctx context.Context, o *services.Orders, rl *relay) {
	defer close(rl.done)
	backoff := time.Duration(0)
	for {
		if err := s.l.clock.SleepOrWake(ctx, backoff, rl.kick); err != nil {
			return
		}
		for {
			sent, err := o.RelayOnce(ctx)
			if ctx.Err() != nil || o.State() == services.StateStopped {
				return
			}
			switch {
			case err == nil && sent == relayBatch:
				continue // more may be pending
			case err == nil, errors.Is(err, services.ErrCrashed), errors.Is(err, services.ErrNotRunning):
				backoff = 0 // wait for the next order or the restart
			default:
				backoff = min(max(2*backoff, relayRetryMin), relayRetryMax)
			}
			break
		}
	}
}

// publish sends one message of a service to a queue as a client named
// after the service, keeping the service's message id. The send goes into
// the history like any other, so the checker counts it.
func (qs *queueSet) publish(ctx context.Context, client, queue string, m services.Message) (services.Outcome, error) {
	w := qs.w
	_, qc, err := qs.sender(client)
	if err != nil {
		return services.Failed, err
	}
	rec := &QueueSend{MsgID: m.ID, Client: client, Queue: queue, Value: m.Value, Outcome: checker.Pending, Sent: qs.l.clock.Now()}
	qs.mu.Lock()
	qs.sends = append(qs.sends, rec)
	qs.mu.Unlock()
	ctx, cancel := w.bind(ctx)
	defer cancel()
	res := qc.Send(ctx, queue, broker.QueueMessage{Body: []byte(m.Value), MsgID: m.ID})
	now := qs.l.clock.Now()
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if len(res) == 0 {
		rec.Outcome = checker.Unknown
		return services.Unknown, fmt.Errorf("send %s to %s: no answer", m.ID, queue)
	}
	rs := res[0]
	rec.Seq, rec.Attempts, rec.Answered = rs.Seq, rs.Attempts, now
	rec.Outcome = outcomeOf(rs.Outcome)
	if rs.Err != nil {
		rec.Err = rs.Err.Error()
	}
	switch {
	case rs.Rejected:
		rec.Outcome = checker.Rejected
		return services.Rejected, fmt.Errorf("%s is full: %w", queue, rs.Err)
	case rs.Outcome == broker.OutcomeAcked:
		return services.Acknowledged, nil
	case rs.Outcome == broker.OutcomeUnknown:
		return services.Unknown, rs.Err
	}
	return services.Failed, rs.Err
}
