// Package partlog is the plain, in-memory state of one partition of an mqlab
// topic: its record batches, split into segments that carry Kafka-style
// sparse indexes, plus the per-producer sequence state that makes produce
// idempotent.
//
// It knows nothing about raft. The partition's raft FSM is a thin adapter
// over a Log: Apply hands the entry's encoded batch to Log.AppendEncoded;
// FSM.Snapshot takes Log.Snapshot (cheap and point in time) and Persist
// writes it with Snapshot.WriteTo; Restore calls ReadLog. AppendEncoded,
// Append and EnforceRetention depend only on their arguments and the
// current state (no clocks, no randomness), so every replica that applies
// the same commands in the same order holds the same log.
//
// The model follows Kafka where it can, so the lab can point at the real
// thing: offsets are assigned contiguously by the leader, record batches are
// stored as they arrived (the bytes of the produce command: a Kafka
// client's batch byte for byte, and the lab's own records in the Kafka
// batch their leader wrote, wirebatch.go; a batch never spans
// segments, and every record of a batch has the batch's epoch) and
// decoded only when read, the log is split into segments that retention
// deletes whole, each segment has a sparse offset index and a sparse time
// index pointing at batches, and idempotent producers are deduplicated
// against their last five batches.
//
// Memory: a Log keeps each batch in the buffer it was appended from
// (AppendEncoded: the caller's, a raft entry's Data; Append: its own
// encoding; ReadLog: the frame it read), and records read from it share
// their Key and Value bytes with that buffer. Nothing in this package writes
// to those bytes, and callers must not either, before or after: sharing is
// what lets a million records fit in the lab's memory budget without a
// second copy. A log with a folder goes further (evict.go): once a
// segment closes whole in its file, its batches' bytes leave memory and
// are read back from the file when a read needs them, so the data lives
// in the files and the heap holds the indexes.
//
// On disk (files.go, kafkabatch.go, recover.go, dump.go): a log attached
// to a folder writes every segment as Kafka's files, record batches of
// format 2 in NNN.log with NNN.index and NNN.timeindex beside them, follows
// every roll and retention deletion, and can be read back from the folder
// after a crash (Recover), cutting a torn tail at the last whole batch.
// DumpFile prints those files as kafka-dump-log does.
//
// Compaction (compact.go): a log whose Config says Compact refuses
// records without a key, and a Compact pass rewrites its closed segments
// keeping the newest record of each key, as Kafka's log cleaner does.
// Offsets never change, so a compacted log has gaps: a batch keeps its
// base offset and span, and its surviving records their offset deltas.
//
// A Log is safe for concurrent use: the FSM writes while the broker's fetch
// and display paths read.
package partlog
