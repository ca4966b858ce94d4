package partlog

import "errors"

// Sentinel errors. Functions wrap them with the details (what was wrong and
// what would have been right), so test with errors.Is.
var (
	// ErrOffsetOutOfRange: a read asked for an offset below the log start
	// (deleted by retention) or beyond the log end (not written yet).
	ErrOffsetOutOfRange = errors.New("partlog: offset out of range")

	// ErrOutOfOrderSequence: an idempotent producer's batch does not follow
	// its previous one, so a batch in between was lost; the producer must
	// not skip ahead. Also returned when a producer this partition has never
	// seen starts anywhere but sequence 0.
	ErrOutOfOrderSequence = errors.New("partlog: out-of-order sequence number")

	// ErrDuplicateSequence: the batch reuses sequence numbers that were
	// already written, but it is not one of the producer's cached last
	// batches, so the original offsets can no longer be answered.
	ErrDuplicateSequence = errors.New("partlog: duplicate sequence number")

	// ErrInvalidBatch: the batch itself is malformed (empty, negative or
	// overflowing sequence numbers). Retrying it cannot succeed.
	ErrInvalidBatch = errors.New("partlog: invalid batch")

	// ErrNoKey: a record without a key was sent to a compacted log.
	// Kafka refuses such a batch with INVALID_RECORD.
	ErrNoKey = errors.New("partlog: record without a key on a compacted topic")

	// ErrInvalidConfig: a Config field is out of range.
	ErrInvalidConfig = errors.New("partlog: invalid config")

	// ErrCorrupt: bytes given to DecodeBatch or ReadLog are not a valid
	// encoding (truncated, damaged, or from an unknown version).
	ErrCorrupt = errors.New("partlog: corrupt encoding")
)
