// Package partlog is the plain, in-memory state of one partition of an mqlab
// topic: its records, split into segments that carry Kafka-style sparse
// indexes, plus the per-producer sequence state that makes produce
// idempotent.
//
// It knows nothing about raft. The partition's raft FSM is a thin adapter
// over a Log: Apply decodes the entry with DecodeBatch and calls Log.Append;
// FSM.Snapshot takes Log.Snapshot (cheap and point in time) and Persist
// writes it with Snapshot.WriteTo; Restore calls ReadLog. Append and
// EnforceRetention depend only on their arguments and the current state (no
// clocks, no randomness), so every replica that applies the same commands in
// the same order holds the same log.
//
// The model follows Kafka where it can, so the lab can point at the real
// thing: offsets are assigned contiguously by the leader, the log is split
// into segments that retention deletes whole, each segment has a sparse
// offset index and a sparse time index, and idempotent producers are
// deduplicated against their last five batches.
//
// Memory: records share their Key and Value bytes with whatever they were
// built from (the Batch given to Append, the buffer given to DecodeBatch, the
// frames ReadLog read). Nothing in this package writes to those bytes, and
// callers must not either; sharing is what lets a million records fit in the
// lab's memory budget without a second copy.
//
// A Log is safe for concurrent use: the FSM writes while the broker's fetch
// and display paths read.
package partlog
