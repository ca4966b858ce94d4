// Package queue is the state machine of one work queue, without raft: the
// messages it holds (ready, in flight with a deadline and a receipt handle,
// delayed, or moving to another queue), their receive counts, and the
// counters that account for every message that ever entered.
//
// The broker replicates a queue by putting each Command into a raft log and
// applying it on every replica; this package only has to be deterministic.
// Nothing here reads a clock: every command carries the time its leader
// stamped on it, and deadlines are absolute times in that clock. So every
// replica makes the same decisions, and after a failover a message in flight
// keeps the deadline it was given.
//
// Moving a message to another queue (dead-lettering, redrive) crosses two
// raft groups, so it is an outbox: the source marks the message moving, the
// broker hands it to the destination with an OpTransferIn that the
// destination deduplicates by transfer id, and only then does the source
// drop it with OpMoved. A failover between the steps resends; the
// destination recognises the repeat.
package queue
