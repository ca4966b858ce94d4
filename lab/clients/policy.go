// Package clients is what the lab's background clients, consumers of a
// group and workers of a queue, share: the policy their client options
// make, with its defaults, retry backoff, the simulated failures and the
// service call of one attempt, how a client describes its policy, pacing
// at rate=, how a restart's options lay over the ones a client started
// with, the throughput of the work they finish, and the retries they
// schedule.
package clients

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/mqlab/mqlab/lab/clock"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/services"
	"github.com/mqlab/mqlab/lab/timeline"
)

// ErrPermanent marks a simulated failure retrying cannot fix (fail=permanent).
var ErrPermanent = errors.New("permanent failure")

// Client option defaults.
const (
	DefaultMaxAttempts = 5
	DefaultBackoffBase = time.Second
	DefaultBackoffCap  = 5 * time.Minute
)

// Policy is a consumer's or worker's client options with the defaults
// filled in.
type Policy struct {
	Rate        float64
	AckBefore   bool
	Fail        command.Failure
	Retry       string
	Base, Cap   time.Duration
	Jitter      string
	MaxAttempts int
	Service     string
	Work        time.Duration // lab time one attempt at the work takes
}

// PolicyOf fills in a client's options with the defaults.
func PolicyOf(o command.ClientOptions) Policy {
	p := Policy{Rate: o.Rate, AckBefore: o.Ack == "before", Fail: o.Fail, Retry: o.Retry, Base: o.Base, Cap: o.Cap,
		Jitter: o.Jitter, MaxAttempts: o.MaxAttempts, Service: o.Service, Work: o.Work}
	if p.Retry == "" {
		p.Retry = "none"
		if p.MaxAttempts > 1 {
			p.Retry = "immediate"
		}
	}
	if p.Retry == "none" {
		p.MaxAttempts = 1
	} else if p.MaxAttempts == 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.Base == 0 {
		p.Base = DefaultBackoffBase
	}
	if p.Cap == 0 {
		p.Cap = max(DefaultBackoffCap, p.Base)
	}
	if p.Jitter == "" {
		p.Jitter = "full"
	}
	return p
}

// Backoff is the lab-time pause before attempt+1 after attempt failed:
// base·2^(attempt-1) up to cap, with jitter full (uniform in [0, d]),
// equal (d/2 plus uniform in [0, d/2]) or none.
func (p Policy) Backoff(attempt int, rng *rand.Rand) time.Duration {
	if p.Retry != "backoff" {
		return 0
	}
	d := float64(p.Base) * math.Pow(2, float64(attempt-1))
	d = min(d, float64(p.Cap))
	switch p.Jitter {
	case "full":
		d = rng.Float64() * d
	case "equal":
		d = d/2 + rng.Float64()*d/2
	}
	return time.Duration(d)
}

// Attempt is one try at a message's work: the simulated failure (fail=),
// then, with service=, the Handle of the service handler finds by name.
func (p Policy) Attempt(ctx context.Context, rng *rand.Rand, m services.Message, handler func(name string) (services.Handler, bool)) error {
	switch f := p.Fail; f.Kind {
	case "transient":
		if rng.Float64() < f.Prob {
			return fmt.Errorf("transient failure (fail=transient:%s)", timeline.Number(f.Prob))
		}
	case "permanent":
		return fmt.Errorf("%w (fail=permanent)", ErrPermanent)
	case "poison":
		if strings.Contains(m.Value, f.Text) {
			return fmt.Errorf("poison message: its payload contains %q", f.Text)
		}
	}
	if p.Service == "" {
		return nil
	}
	h, ok := handler(p.Service)
	if !ok {
		return fmt.Errorf("%s: %w", p.Service, services.ErrNotRunning)
	}
	return h.Handle(services.WithMessage(ctx, m.ID), m)
}

// Describe says how a client works, in a few words: settles is what it
// does with each message ("commits each offset", "acks each message"),
// unit what its rate counts, retries its words on retrying ("" for none)
// and crash its armed crash point.
func (p Policy) Describe(settles, unit, retries, crash string) string {
	var parts []string
	if p.AckBefore {
		parts = append(parts, "it "+settles+" before the work (at most once)")
	} else {
		parts = append(parts, "it "+settles+" after the work (at least once)")
	}
	if p.Service != "" {
		parts = append(parts, "the work is "+p.Service+"'s handling of the message")
	}
	if p.Rate > 0 {
		parts = append(parts, fmt.Sprintf("%s %s/s of lab time", timeline.Number(p.Rate), unit))
	}
	if p.Work > 0 {
		parts = append(parts, fmt.Sprintf("each attempt at the work takes %v of lab time", p.Work))
	}
	if f := p.Fail; f.Kind != "" {
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
// still catch up: a fetch or a commit costs a moment, and rate= promises
// messages per second of lab time, not a pause after each one. It is
// short: a stall of the machine holds lab time (see Claim) rather than
// leaving a debt the client would pay back in a burst faster than its
// rate, which a learner reading throughput would see. A client that ran
// out of work, waited for its service or backed off starts afresh
// (rest), so waiting earns it nothing.
const pacerSlack = 100 * time.Millisecond

// Pacer spaces a client's messages at rate= per second of lab time; its
// zero value starts with the first message.
type Pacer struct {
	due    time.Time // lab time the next message may be taken
	rested bool      // the client ran out of work: the next message starts the schedule

	// Claim, when set, holds lab time while a message the schedule let in
	// waits for the client to take it: a late start can only be the
	// machine's doing. Working and Rest let go; Close ends it.
	Claim *clock.Claim
	// Instant says the client's work takes no lab time: its claim holds
	// through the work, the commit and the next fetch too, so what they
	// cost the machine is not taken from its rate.
	Instant bool
}

// fetchGrip is how long a paced client's fetch may hold lab time. The
// claim holds only while the client is behind, after a fetch that came
// back full, so the next fetch almost always finds records at once and
// what it costs is the machine's: a queue's receive is a replicated
// write, which a busy machine can take a hundred milliseconds or more
// over, and lab time that ran on meanwhile would be taken from the
// client's rate. A fetch that waits instead (it met a rebalance, which
// waits on lab time itself, or the backlog ended exactly) lets go after
// the clock's usual grip.
const fetchGrip = clock.Grip

// Fetching tells the pacer the client asks for more messages: it holds
// lab time only briefly while it waits for them.
func (pc *Pacer) Fetching() {
	if pc.Claim != nil {
		pc.Claim.Briefly(fetchGrip)
	}
}

// Working tells the pacer the client has taken its message: work that
// waits on lab time must not have lab time wait for it in turn.
func (pc *Pacer) Working() {
	if pc.Claim != nil && !pc.Instant {
		pc.Claim.Idle()
	}
}

// Rest tells the pacer the client has taken all there was: the next
// message, whenever it comes, starts a new schedule.
func (pc *Pacer) Rest() {
	pc.rested = true
	if pc.Claim != nil {
		pc.Claim.Idle()
	}
}

// Close lets go of the pacer's claim on lab time, if it has one.
func (pc *Pacer) Close() {
	if pc.Claim != nil {
		pc.Claim.Close()
	}
}

// Wait waits until the rate lets the next message in; false when ctx ended.
func (pc *Pacer) Wait(ctx context.Context, clock *clock.Clock, rate float64) bool {
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
	if pc.Claim != nil {
		// Ahead or late, the message is due at pc.due: lab time may run
		// to it and a claim's slack past it, so the client wakes, but no
		// further while the machine is slow to wake it. Left to the
		// clock's slack for sleepers, a client slow to wake would lose
		// the difference from its rate.
		pc.Claim.Behind(pc.due)
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

// MergeOptions lays a restart's options over the ones a client was started
// with; crash= is armed only when the restart gives it (a crash fires once).
func MergeOptions(o, n command.ClientOptions) command.ClientOptions {
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
