// Package family is the seam between the lab and a family of commands
// that lives in a package of its own (lab/kafka): what the family gets
// from the lab, and what the lab asks of it. A family imports this
// package, lab/command, lab/checker, lab/timeline and broker as it needs;
// lab imports the family, never the other way round.
//
// A family's state belongs to one world, everything one cluster command
// creates: the lab makes a family's value when it makes a world (handing
// it the World), sends it the family's commands, asks it for the lab
// values it owns, lets it add to what the checker sees, and closes it
// when the world is retired.
package family

import (
	"context"
	"errors"
	"net"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/clock"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/timeline"
)

// World is what a family gets from the lab for one cluster.
type World interface {
	// Cluster is the world's broker cluster.
	Cluster() *broker.Cluster
	// Clock is the lab's time, which speed and pause change.
	Clock() *clock.Clock
	// Context ends when the world is retired: what a family runs in the
	// background stops with it.
	Context() context.Context
	// Add puts an event in the timeline, unless the world has been
	// retired: a service of an old cluster says nothing more.
	Add(e timeline.Event)
	// AddAlways puts an event in the timeline even once the world is
	// retired: what a generator says as it stops, such as a load's last
	// line when a cluster command ends it.
	AddAlways(e timeline.Event)
}

// Run is one command's execution, as the family that runs it sees it.
type Run interface {
	// Begin puts the command in the timeline. Call it after checking
	// everything that can be checked without acting, so that a command
	// that cannot run leaves no trace.
	Begin(text string)
	// Say is what the command has to say: a line of its result, and of
	// the timeline.
	Say(kind timeline.Kind, format string, args ...any)
}

// Family is a family of commands for one world.
type Family interface {
	// Exec runs one of the family's commands.
	Exec(ctx context.Context, r Run, cmd command.Command) error
	// Value reads a lab value the family owns (ok false: not its name).
	Value(ctx context.Context, v command.Value) (val any, ok bool, err error)
	// Observe adds what the family's clients did to the check: their
	// produces, deliveries, side effects, queue fates.
	Observe(ctx context.Context, h *checker.History, o *checker.Observed) error
	// Close stops whatever the family runs for the world.
	Close()
}

// NotNow marks err as about a lab value that cannot be read at this
// moment but may be soon (no leader during an election, a load that has
// not begun): a wait keeps polling, an expect fails with it. Every other
// error a Value returns is a script error.
func NotNow(err error) error { return notNow{err} }

type notNow struct{ err error }

func (e notNow) Error() string { return e.err.Error() }
func (e notNow) Unwrap() error { return e.err }

// IsNotNow says whether err, or an error it wraps, was marked by NotNow.
func IsNotNow(err error) bool {
	var n notNow
	return errors.As(err, &n)
}

// ErrClosed: the lab, or the world a family ran in, has been closed.
var ErrClosed = errors.New("lab closed")

// ListEach is how many messages a command describes one by one; beyond
// it, one summary line.
const ListEach = 10

// Bind returns a context that also ends when the world is retired.
func Bind(ctx context.Context, w World) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(w.Context(), cancel)
	return ctx, func() { stop(); cancel() }
}

// Loopback says whether a listener bound to host is reachable from this
// machine alone: the listeners that let outside clients in warn for any
// other address, since their protocols are not authenticated.
func Loopback(host string) bool {
	if host == "" || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
