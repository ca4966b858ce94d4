// Package groupcoord is the plain state of consumer-group coordination, the
// part of a Kafka-style group coordinator that needs no raft: members and
// their sessions, generations, the range and round-robin assignors, the
// checks an offset commit must pass, and the encoding of the records the
// coordinator keeps in the internal topic __consumer_offsets.
//
// It knows nothing about raft, the network or clocks. Every operation takes
// the time it happens at, so tests drive sessions and rebalance deadlines by
// hand, and the broker's coordinator is a thin adapter: it calls these
// operations, writes the records they ask for to __consumer_offsets, and
// turns the Changes they return into events. A coordinator that takes over
// rebuilds a Coordinator by feeding it every committed record (Load) in log
// order.
//
// The protocol is Kafka's eager rebalance, with the assignment computed by
// the coordinator (Kafka lets the group's leader compute it and hands it out
// with SyncGroup; here JoinGroup's answer carries it):
//
//   - A join of a new member, a leave, an expired session or a changed
//     subscription starts a rebalance: the group is preparing-rebalance and
//     every member must rejoin. Members learn it from their next heartbeat,
//     commit what they have processed, give up their partitions and join
//     again.
//   - When every member has rejoined, or the rebalance deadline (the
//     longest session timeout among the members) has passed and the
//     stragglers are dropped, the generation goes up by one and the
//     coordinator assigns the partitions: completing-rebalance.
//   - Once the group's metadata record for that generation is committed in
//     __consumer_offsets (Persisted), the group is stable and the waiting
//     joins are answered with the new generation and each member's
//     partitions. Members beyond the partition count get none: idle.
//
// An offset commit is accepted only from a member of the group's current
// generation for a partition assigned to it; anything else is fenced
// (ErrFenced with ErrStaleGeneration, ErrUnknownMember or ErrNotAssigned):
// that is what keeps a zombie — a member the group gave up on that goes on
// working — from overwriting the new owner's progress.
package groupcoord
