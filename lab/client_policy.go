package lab

// The client options consumers (feature_groups.go) and workers
// (feature_queues.go) share: the policy with its defaults, retry backoff,
// the simulated failures and the service call of one attempt, how a
// client describes its policy, pacing at rate=, and how a restart's
// options lay over the ones a client started with.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/services"
)

// errPermanent marks a simulated failure retrying cannot fix (fail=permanent).
var errPermanent = errors.New("permanent failure")

// clientPolicy is a consumer's or worker's client options with the defaults filled in.
type clientPolicy struct {
	rate        float64
	ackBefore   bool
	fail        command.Failure
	retry       string
	base, cap   time.Duration
	jitter      string
	maxAttempts int
	service     string
	work        time.Duration // lab time one attempt at the work takes
}

func policyOf(o command.ClientOptions) clientPolicy {
	p := clientPolicy{rate: o.Rate, ackBefore: o.Ack == "before", fail: o.Fail, retry: o.Retry, base: o.Base, cap: o.Cap,
		jitter: o.Jitter, maxAttempts: o.MaxAttempts, service: o.Service, work: o.Work}
	if p.retry == "" {
		p.retry = "none"
		if p.maxAttempts > 1 {
			p.retry = "immediate"
		}
	}
	if p.retry == "none" {
		p.maxAttempts = 1
	} else if p.maxAttempts == 0 {
		p.maxAttempts = defaultMaxAttempts
	}
	if p.base == 0 {
		p.base = defaultBackoffBase
	}
	if p.cap == 0 {
		p.cap = max(defaultBackoffCap, p.base)
	}
	if p.jitter == "" {
		p.jitter = "full"
	}
	return p
}

// backoff is the lab-time pause before attempt+1 after attempt failed:
// base·2^(attempt-1) up to cap, with jitter full (uniform in [0, d]),
// equal (d/2 plus uniform in [0, d/2]) or none.
func (p clientPolicy) backoff(attempt int, rng *rand.Rand) time.Duration {
	if p.retry != "backoff" {
		return 0
	}
	d := float64(p.base) * math.Pow(2, float64(attempt-1))
	d = min(d, float64(p.cap))
	switch p.jitter {
	case "full":
		d = rng.Float64() * d
	case "equal":
		d = d/2 + rng.Float64()*d/2
	}
	return time.Duration(d)
}

// attempt is one try at a message's work: the simulated failure (fail=),
// then, with service=, the service's Handle.
func (p clientPolicy) attempt(ctx context.Context, w *world, rng *rand.Rand, m services.Message) error {
	switch f := p.fail; f.Kind {
	case "transient":
		if rng.Float64() < f.Prob {
			return fmt.Errorf("transient failure (fail=transient:%s)", trimFloat(f.Prob))
		}
	case "permanent":
		return fmt.Errorf("%w (fail=permanent)", errPermanent)
	case "poison":
		if strings.Contains(m.Value, f.Text) {
			return fmt.Errorf("poison message: its payload contains %q", f.Text)
		}
	}
	if p.service == "" {
		return nil
	}
	h, ok := w.handler(p.service)
	if !ok {
		return fmt.Errorf("%s: %w", p.service, services.ErrNotRunning)
	}
	return h.Handle(services.WithMessage(ctx, m.ID), m)
}

// describe says how a client works, in a few words: settles is what it
// does with each message ("commits each offset", "acks each message"),
// unit what its rate counts, retries its words on retrying ("" for none)
// and crash its armed crash point.
func (p clientPolicy) describe(settles, unit, retries, crash string) string {
	var parts []string
	if p.ackBefore {
		parts = append(parts, "it "+settles+" before the work (at most once)")
	} else {
		parts = append(parts, "it "+settles+" after the work (at least once)")
	}
	if p.service != "" {
		parts = append(parts, "the work is "+p.service+"'s handling of the message")
	}
	if p.rate > 0 {
		parts = append(parts, fmt.Sprintf("%s %s/s of lab time", trimFloat(p.rate), unit))
	}
	if p.work > 0 {
		parts = append(parts, fmt.Sprintf("each attempt at the work takes %v of lab time", p.work))
	}
	if f := p.fail; f.Kind != "" {
		parts = append(parts, "fail="+f.String())
	}
	if retries != "" {
		parts = append(parts, retries)
	}
	if crash != "" {
		parts = append(parts, "it crashes once at "+crash)
	}
	return strings.Join(parts, "; ")
}

// pacerSlack is how far behind its schedule a busy client may fall and
// still catch up: a fetch, a commit or a stall of the machine costs a
// moment (at 10x, 3 s of lab time are 300 ms of wall time), and rate=
// promises messages per second of lab time, not a pause after each one. A
// client that ran out of work, waited for its service or backed off
// starts afresh (rest), so waiting earns it nothing.
const pacerSlack = 3 * time.Second

// pacer spaces a client's messages at rate= per second of lab time.
type pacer struct {
	due    time.Time // lab time the next message may be taken
	rested bool      // the client ran out of work: the next message starts the schedule
}

// rest tells the pacer the client has taken all there was: the next
// message, whenever it comes, starts a new schedule.
func (pc *pacer) rest() { pc.rested = true }

// wait waits until the rate lets the next message in; false when ctx ended.
func (pc *pacer) wait(ctx context.Context, clock *Clock, rate float64) bool {
	if rate <= 0 {
		return ctx.Err() == nil
	}
	now := clock.Now()
	switch {
	case pc.due.IsZero():
		pc.due = now
	case pc.rested:
		// A new schedule, but not before the last message's gap is over:
		// a client that empties its queue between messages keeps its rate.
		pc.due, pc.rested = later(pc.due, now), false
	case now.Sub(pc.due) > pacerSlack:
		pc.due = now.Add(-pacerSlack)
	}
	if clock.SleepUntil(ctx, pc.due) != nil {
		return false
	}
	pc.due = pc.due.Add(time.Duration(float64(time.Second) / rate))
	return true
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// mergeOptions lays a restart's options over the ones a client was started
// with; crash= is armed only when the restart gives it (a crash fires once).
func mergeOptions(o, n command.ClientOptions) command.ClientOptions {
	o.Crash = n.Crash
	if n.Rate != 0 {
		o.Rate = n.Rate
	}
	if n.Ack != "" {
		o.Ack = n.Ack
	}
	if n.Fail != (command.Failure{}) {
		o.Fail = n.Fail
	}
	if n.Retry != "" {
		o.Retry, o.Base, o.Cap, o.Jitter = n.Retry, n.Base, n.Cap, n.Jitter
	}
	if n.MaxAttempts != 0 {
		o.MaxAttempts = n.MaxAttempts
	}
	if n.Service != "" {
		o.Service = n.Service
	}
	if n.Work != 0 {
		o.Work = n.Work
	}
	return o
}
