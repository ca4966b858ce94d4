package services

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Message is one message as a service sends or receives it. ID travels with
// the message and stays the same on every retry and republish, so a repeat
// can be recognised; Key chooses the partition.
type Message struct {
	ID    string
	Key   string
	Value string
}

// Outcome is what a publish ended in, as far as the publisher could learn.
type Outcome int

const (
	// Acknowledged: the broker confirmed it (acks=1/all, or a queue accepted it).
	Acknowledged Outcome = iota + 1
	// Rejected: the broker refused it (a full queue); nothing was stored.
	Rejected
	// Failed: the publisher knows it was not stored.
	Failed
	// Unknown: no answer (timeout, leadership lost); it may or may not be stored.
	Unknown
)

func (o Outcome) String() string {
	switch o {
	case Acknowledged:
		return "acknowledged"
	case Rejected:
		return "rejected"
	case Failed:
		return "failed"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// Publisher sends one message to a topic or queue. The lab wires it to a
// broker client; the outbox relay expects acks=all behind it.
type Publisher interface {
	Publish(ctx context.Context, dest string, m Message) (Outcome, error)
}

// PublisherFunc adapts a function to Publisher.
type PublisherFunc func(ctx context.Context, dest string, m Message) (Outcome, error)

// Publish calls f.
func (f PublisherFunc) Publish(ctx context.Context, dest string, m Message) (Outcome, error) {
	return f(ctx, dest, m)
}

// Handler is a service that takes deliveries: *Wallet and *Payments. The
// lab's consumer or worker calls Handle as its work for one message and
// reads the error as a client would:
//
//   - nil: done (also "already done, a duplicate"): ack.
//   - errors.Is(err, ErrCrashed): the process died here; the client crashes
//     with it (no ack) and the service stays crashed until Restart.
//   - errors.Is(err, ErrNotRunning): the service is down: no ack, retry later.
//   - errors.Is(err, ErrBadMessage): permanent: retrying cannot help (DLQ).
//   - anything else (an SQL error, ErrKeyReused): a failure the client's
//     retry policy decides about.
type Handler interface {
	Handle(ctx context.Context, m Message) error
}

// Clock reads the lab's (scaled, pausable) clock.
type Clock func() time.Time

// Sleeper waits d of lab time, or until ctx is done (then it returns ctx's
// error promptly). The lab's sleeper follows its speed and pause; tests use a
// fake one. Services never call time.Sleep themselves.
type Sleeper interface {
	Sleep(ctx context.Context, d time.Duration) error
}

// SleepFunc adapts a function to Sleeper.
type SleepFunc func(ctx context.Context, d time.Duration) error

// Sleep calls f.
func (f SleepFunc) Sleep(ctx context.Context, d time.Duration) error { return f(ctx, d) }

// WallSleep waits d of wall time: the default Sleeper, and the one that
// testing/synctest turns into fake time.
func WallSleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Hold is the lab's hold on its clock for work that takes no lab time: a
// buyer's checkout between its modelled calls, a relay pass. On says the
// work is at hand from a moment of lab time; Off that it waits on
// something other than the machine (a request thread, lab time); Close
// that it is over. While it is on, a machine too busy to run the work
// holds the lab's clock instead of letting lab time run on.
type Hold interface {
	On(at time.Time)
	Off()
	Close()
}

// noHold holds nothing: the default, and what tests with a fake clock get.
type noHold struct{}

func (noHold) On(time.Time) {}
func (noHold) Off()         {}
func (noHold) Close()       {}

// Env is what every service needs from the outside world. Zero fields get
// defaults: time.Now, WallSleep, no publisher, events dropped, no holds.
type Env struct {
	Publisher Publisher
	Clock     Clock
	Sleeper   Sleeper
	// Hold returns a new hold, off, and ctx carrying it: the Sleeper's
	// waits under that ctx set the hold aside while they last.
	Hold func(ctx context.Context) (context.Context, Hold)
	// Sink receives every event, synchronously, from whatever goroutine the
	// service runs on: it must be quick and safe for concurrent use.
	Sink func(Event)
}

func (e Env) withDefaults() Env {
	if e.Clock == nil {
		e.Clock = time.Now
	}
	if e.Sleeper == nil {
		e.Sleeper = SleepFunc(WallSleep)
	}
	if e.Sink == nil {
		e.Sink = func(Event) {}
	}
	if e.Hold == nil {
		e.Hold = func(ctx context.Context) (context.Context, Hold) { return ctx, noHold{} }
	}
	return e
}

// EventKind names what an Event reports.
type EventKind string

// The kinds of events services emit.
const (
	EventSQL           EventKind = "sql"            // one statement: SQL, Args, RowsAffected or Rows, Err
	EventOrderPlaced   EventKind = "order-placed"   // an order row committed
	EventOrderFailed   EventKind = "order-failed"   // an order was not stored
	EventPublished     EventKind = "published"      // the broker acknowledged a message
	EventRepublished   EventKind = "republished"    // the relay published a row it had published before
	EventPublishFailed EventKind = "publish-failed" // a publish ended rejected, failed or unknown
	EventCrashed       EventKind = "crashed"        // a crash point fired
	EventRestarted     EventKind = "restarted"
	EventDuplicate     EventKind = "duplicate" // a repeat recognised and absorbed: no effect applied
	EventEffect        EventKind = "effect"    // a side effect applied (a credit, a charge) for MessageID
	EventCheckout      EventKind = "checkout"  // a checkout answered its buyer, OK or with an error
)

// Event is one thing a service did. It is a plain value, safe to keep.
type Event struct {
	Time    time.Time
	Service string // "orders", "wallet", …
	DB      string // the database an SQL statement ran on ("wallet-dedupe" for the second one)
	Kind    EventKind
	// SQL events: the statement exactly as sent to SQLite, its arguments,
	// and rows affected (writes; -1 when not known) or rows returned (reads).
	SQL          string
	Args         []any
	RowsAffected int64
	Rows         int
	// Message the event concerns, if any.
	MessageID string
	Key       string
	Detail    string // one readable line
	Err       string // the error, if the step failed
	// Cause is the message whose handling ran an SQL statement, when the
	// caller named it with WithMessage.
	Cause string
}

// InlineSQL renders the statement with its arguments substituted as SQL
// literals, for display: INSERT … VALUES ('msg-881').
func (e Event) InlineSQL() string {
	if len(e.Args) == 0 {
		return e.SQL
	}
	var b strings.Builder
	args := e.Args
	inQuote := byte(0)
	for i := 0; i < len(e.SQL); i++ {
		c := e.SQL[i]
		switch {
		case inQuote != 0:
			if c == inQuote {
				inQuote = 0
			}
		case c == '\'' || c == '"':
			inQuote = c
		case c == '?' && len(args) > 0:
			b.WriteString(sqlLiteral(args[0]))
			args = args[1:]
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func sqlLiteral(v any) string {
	if vr, ok := v.(driver.Valuer); ok {
		if dv, err := vr.Value(); err == nil {
			v = dv
		}
	}
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case []byte:
		return fmt.Sprintf("X'%X'", x)
	case bool:
		if x {
			return "1"
		}
		return "0"
	default:
		return fmt.Sprint(x)
	}
}

// String is the event as one timeline line.
func (e Event) String() string {
	var b strings.Builder
	b.WriteString(e.Service)
	if e.DB != "" && e.DB != e.Service {
		b.WriteString("[" + e.DB + "]")
	}
	b.WriteString(" ")
	if e.Kind == EventSQL {
		b.WriteString(e.InlineSQL())
		switch {
		case e.Err != "":
		case e.RowsAffected >= 0 && e.Rows == 0 && isWrite(e.SQL):
			fmt.Fprintf(&b, "  -- %d row(s)", e.RowsAffected)
		case e.Rows > 0 || isRead(e.SQL):
			fmt.Fprintf(&b, "  -- %d row(s) returned", e.Rows)
		}
	} else {
		b.WriteString(string(e.Kind))
		if e.Detail != "" {
			b.WriteString(": " + e.Detail)
		}
	}
	if e.Err != "" {
		b.WriteString("  ✗ " + e.Err)
	}
	return b.String()
}

func firstWord(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " \t\n("); i >= 0 {
		s = s[:i]
	}
	return strings.ToUpper(s)
}

func isWrite(q string) bool {
	switch firstWord(q) {
	case "INSERT", "UPDATE", "DELETE", "REPLACE":
		return true
	}
	return false
}

func isRead(q string) bool {
	switch firstWord(q) {
	case "SELECT", "WITH":
		return true
	}
	return false
}

// Errors callers branch on.
var (
	// ErrCrashed: a crash point fired during this call; the service is now
	// crashed. The caller should behave as if its process died (no ack).
	ErrCrashed = errors.New("service crashed")
	// ErrNotRunning: the service is crashed or stopped; Restart it.
	ErrNotRunning = errors.New("service is not running")
	// ErrReadOnly: a learner's query tried to change data or was not a query.
	ErrReadOnly = errors.New("read-only")
	// ErrBadMessage: a delivery the service cannot use; retrying will not help.
	ErrBadMessage = errors.New("bad message")
	// ErrNotPublished: the broker did not acknowledge a message.
	ErrNotPublished = errors.New("not published")
	// ErrKeyReused: an idempotency key came back with different parameters.
	ErrKeyReused = errors.New("idempotency key reused with different parameters")
	// ErrNoThread: a checkout waited for a request thread until its deadline.
	ErrNoThread = errors.New("no request thread free")
	// ErrTimeout: a checkout passed its deadline while calling a downstream service.
	ErrTimeout = errors.New("request timed out")
	// ErrUnknownTable: no such table in the service.
	ErrUnknownTable = errors.New("unknown table")
)
