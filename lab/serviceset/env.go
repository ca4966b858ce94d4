package serviceset

// What a running service gets (services.Env): the lab's publisher for a
// client of the service's name, the clock, and a sink into the timeline
// and the checker's effects; payments as checkout calls it; and the
// orders service's outbox relay, which runs in lab time.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/services"
	"github.com/mqlab/mqlab/lab/timeline"
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
func (s *Set) env(name string) services.Env {
	return services.Env{
		Publisher: s.lab.Publisher(name),
		Clock:     s.w.Clock().Now,
		Sleeper:   services.SleepFunc(s.w.Clock().Sleep),
		Hold:      s.hold,
		Sink:      s.sink,
	}
}

// hold is a new hold on the lab's clock, off, and ctx carrying it, so that
// the service's sleeps on the clock under ctx set it aside.
func (s *Set) hold(ctx context.Context) (context.Context, services.Hold) {
	h := s.w.Clock().Hold()
	return h.Context(ctx), h
}

// sink takes every event a service reports, from whatever goroutine the
// service runs on.
func (s *Set) sink(e services.Event) {
	if e.Kind == services.EventEffect && e.MessageID != "" {
		s.mu.Lock()
		s.effects = append(s.effects, checker.Effect{Service: e.Service, Kind: effectKind(e.Service), MsgID: e.MessageID})
		s.mu.Unlock()
	}
	s.add(e)
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

// add puts one service event in the timeline, unless its world has been
// retired.
func (s *Set) add(e services.Event) {
	kind := timeline.Service
	if e.Kind == services.EventSQL {
		kind = timeline.SQL
	}
	se := &timeline.ServiceEvent{Service: e.Service, DB: e.DB, Kind: string(e.Kind), SQL: e.SQL, Args: e.Args, RowsAffected: e.RowsAffected,
		Rows: e.Rows, MsgID: e.MessageID, Key: e.Key, Detail: e.Detail, Err: e.Err}
	text := sqlLineBreaks.ReplaceAllString(e.String(), " ")
	s.w.Add(timeline.Event{Time: e.Time, Kind: kind, Text: text, Detail: s.lab.Detail(e), Service: se})
}

// paymentsNow charges through whichever payments service runs when the
// charge is made, so checkout survives payments being stopped and started.
type paymentsNow struct{ s *Set }

func (p paymentsNow) Charge(ctx context.Context, r services.ChargeRequest) (services.ChargeResult, error) {
	rs := p.s.get("payments")
	if rs == nil {
		return services.ChargeResult{}, fmt.Errorf("payments: %w: %s", services.ErrNotRunning, p.s.NotRunning("payments"))
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

func (s *Set) startRelay(o *services.Orders) *relay {
	ctx, cancel := context.WithCancel(s.w.Context())
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
func (s *Set) runRelay(ctx context.Context, o *services.Orders, rl *relay) {
	defer close(rl.done)
	// A pass publishes and marks rows at once in lab time: its hold keeps
	// the lab's clock for it on a busy machine. The sleeps between passes
	// set it aside.
	ctx, hold := s.hold(ctx)
	defer hold.Close()
	backoff := time.Duration(0)
	for {
		hold.Off()
		if err := s.w.Clock().SleepOrWake(ctx, backoff, rl.kick); err != nil {
			return
		}
		for {
			hold.On(s.w.Clock().Now())
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
