// Package services holds the lab's simulated services — orders, payments,
// wallet and checkout — as real code over real SQL: each service owns its
// SQLite database (in memory, through the pure-Go driver) and every
// statement it runs is reported as an Event with its exact text and
// arguments, so the learner reads the SQL that really ran.
//
// The package knows nothing of the broker or the lab; the lab wires it.
// A service gets what it needs through Env: a Publisher (the lab's broker
// client; the outbox relay expects acks=all behind it), the lab's Clock, a
// Sleeper for waits in lab time, and a Sink for events. Deliveries come in
// by method call: the lab's consumers and workers call Handle (see Handler
// for how to read its error). Checkout's buyers call Buy, one goroutine per
// buyer. The outbox relay is a step function, RelayOnce, or a loop,
// RunRelay, that runs on a goroutine the lab owns and stops with its
// context.
//
// Crash points are named (crash=after-commit …), fire once, and leave the
// service crashed — its database survives, as a database server would
// when the process using it dies — until Restart. The call during which a
// point fires returns an error wrapping ErrCrashed; calls after it return
// ErrNotRunning.
//
// A write ceiling (Writes in each config: write transactions per second of
// lab time) makes a database the bottleneck, so adding workers stops
// helping. The learner's reads — Query, Count, Rows, and the Registry that
// finds services by name — go through a separate connection opened
// read-only (mode=ro, query_only), so no text can change a table; they are
// not reported as events.
package services
