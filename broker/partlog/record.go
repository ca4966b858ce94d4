package partlog

// Record is one message in the log.
type Record struct {
	Offset    int64
	Epoch     uint64 // raft term of the leader that wrote it (the same for every record of a batch)
	Timestamp int64  // unix nanoseconds, from the leader's command
	Key       []byte // nil = unkeyed
	Value     []byte
	MsgID     string   // message id travelling with the message (client name + sequence), may be ""
	Headers   []Header // a Kafka client's record headers, nil for none
}

// Header is one record header: a key and a value, as Kafka's records
// carry them.
type Header struct {
	Key   string
	Value []byte // nil and empty differ, as in Kafka
}

// Batch is what one raft log entry carries for a produce, decoded. A Log
// keeps batches in their encoded form (see EncodeBatch) and decodes records
// only when they are read.
type Batch struct {
	ProducerID int64    // 0 = not idempotent
	BaseSeq    int32    // sequence number of the first record (ignored when ProducerID == 0)
	Records    []Record // Key, Value, Timestamp, MsgID set by the producer/leader; Offset and Epoch are assigned by Append
}

// AppendResult says where a batch landed.
type AppendResult struct {
	BaseOffset int64 // offset of the batch's first record
	Count      int   // number of records in the batch
	// Duplicate is true when the batch repeated one of the producer's last
	// five batches: nothing was appended and BaseOffset is the offset the
	// original was given, so a retrying producer gets the same answer.
	Duplicate bool
}

// SegmentInfo describes one segment, for display and for tests.
type SegmentInfo struct {
	BaseOffset       int64 // offset of the first record
	NextOffset       int64 // one past the last record (exclusive)
	Records          int
	Batches          int   // record batches: a batch never spans segments
	Bytes            int64 // key+value bytes
	MinTimestamp     int64 // 0 when empty
	MaxTimestamp     int64 // 0 when empty
	Closed           bool  // rolled: no more appends, eligible for retention
	IndexEntries     int   // entries in the sparse offset index (each points at a batch)
	TimeIndexEntries int   // entries in the sparse time index (each points at a batch)
}

// ProducerState describes what the log remembers about one idempotent
// producer, for display.
type ProducerState struct {
	ProducerID    int64
	LastSeq       int32 // sequence number of the last record written
	CachedBatches int   // batches remembered for duplicate detection (at most 5)
}
