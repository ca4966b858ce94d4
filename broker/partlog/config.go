package partlog

import (
	"fmt"
	"math"
	"strings"
	"time"
)

const (
	// defaultSegmentRecords applies when neither segment limit is set: small,
	// so a lab with a few hundred messages already shows several segments.
	defaultSegmentRecords = 16

	// defaultIndexIntervalBytes is far below Kafka's 4096 so that segments of
	// a few small records still show some index entries.
	defaultIndexIntervalBytes = 64

	// maxSegmentRecords caps a segment whatever the config says: index
	// entries hold offsets relative to the segment base in 32 bits, as
	// Kafka's do, so a segment must roll before that overflows (and a
	// batch can hold no more).
	maxSegmentRecords = math.MaxInt32

	// defaultDeleteRetention is Kafka's delete.retention.ms default.
	defaultDeleteRetention = 24 * time.Hour
)

// Config says when segments roll, how long they are kept, and how dense the
// indexes are. The zero Config is valid: 16-record segments, kept forever.
type Config struct {
	// Segments hold whole batches, as in Kafka: a batch never spans two
	// segments. The active segment rolls before a batch that would take it
	// past either limit, unless it is empty, so a batch larger than a limit
	// gets a segment to itself.
	SegmentRecords int   // a segment holds at most this many records (0 = no record limit)
	SegmentBytes   int64 // a segment holds at most this many key+value bytes (0 = no byte limit). If all three limits are 0, 16 records.
	// SegmentAge: a batch whose largest timestamp is this much newer than
	// the active segment's first batch's starts a new segment (0 = no age
	// limit): Kafka's segment.ms, which, as there, rolls only when a batch
	// arrives, so every replica rolls at the same batch.
	SegmentAge time.Duration

	RetentionAge time.Duration // 0 = keep forever; closed segments whose newest record is older than now-age are deleted
	// RetentionBytes: 0 = no size limit; the oldest closed segments are
	// deleted while the log without them still holds at least RetentionBytes
	// (Kafka's rule: never delete below the limit).
	RetentionBytes int64

	// IndexIntervalBytes: the offset index gets an entry (pointing at a
	// batch) once this many key+value bytes have been appended since the
	// last one (0 = 64); the time index gets one at the same moments, when
	// the segment's max timestamp has grown since its last entry.
	IndexIntervalBytes int

	// Compact: the topic's cleanup policy includes compact, so Compact
	// passes keep only the newest record of each key in the closed
	// segments, and a record without a key is refused (compact.go).
	// Retention still applies when its limits are set (compact,delete).
	Compact bool
	// DeleteRetention is how long a tombstone (a record whose value is
	// null) outlives its own timestamp before a pass removes it, so a
	// consumer that far behind still sees the delete: Kafka's
	// delete.retention.ms (0 = its default, one day).
	DeleteRetention time.Duration

	// Name is the partition's name, "orders/0": a log with one gives the
	// records of Kafka clients' batches, which carry no message id, one
	// derived from it (WireMsgID). "" leaves them without.
	Name string
}

// Validate reports every field that is out of range.
func (c Config) Validate() error {
	var bad []string
	if c.SegmentRecords < 0 || int64(c.SegmentRecords) > maxSegmentRecords {
		bad = append(bad, fmt.Sprintf("SegmentRecords is %d; want 0 (no record limit) or 1..%d", c.SegmentRecords, int64(maxSegmentRecords)))
	}
	if c.SegmentAge < 0 {
		bad = append(bad, fmt.Sprintf("SegmentAge is %v; want 0 (no age limit) or a positive duration", c.SegmentAge))
	}
	if c.SegmentBytes < 0 {
		bad = append(bad, fmt.Sprintf("SegmentBytes is %d; want 0 (no byte limit) or a positive size", c.SegmentBytes))
	}
	if c.RetentionAge < 0 {
		bad = append(bad, fmt.Sprintf("RetentionAge is %v; want 0 (keep forever) or a positive duration", c.RetentionAge))
	}
	if c.RetentionBytes < 0 {
		bad = append(bad, fmt.Sprintf("RetentionBytes is %d; want 0 (no size limit) or a positive size", c.RetentionBytes))
	}
	if c.DeleteRetention < 0 {
		bad = append(bad, fmt.Sprintf("DeleteRetention is %v; want 0 (default %v) or a positive duration", c.DeleteRetention, defaultDeleteRetention))
	}
	if c.IndexIntervalBytes < 0 {
		bad = append(bad, fmt.Sprintf("IndexIntervalBytes is %d; want 0 (default %d) or a positive size", c.IndexIntervalBytes, defaultIndexIntervalBytes))
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, strings.Join(bad, "; "))
	}
	return nil
}

// withDefaults fills in the zero fields that stand for a default, so the
// rest of the package never has to special-case them.
func (c Config) withDefaults() Config {
	if c.SegmentRecords == 0 && c.SegmentBytes == 0 && c.SegmentAge == 0 {
		c.SegmentRecords = defaultSegmentRecords
	}
	if c.IndexIntervalBytes == 0 {
		c.IndexIntervalBytes = defaultIndexIntervalBytes
	}
	if c.DeleteRetention == 0 {
		c.DeleteRetention = defaultDeleteRetention
	}
	return c
}
