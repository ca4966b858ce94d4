package partlog

import (
	"errors"
	"strings"
	"testing"
)

func TestIdempotentRetriesOfLastFiveBatches(t *testing.T) {
	l := newLog(t, Config{SegmentRecords: 4})
	const pid = 42
	var batches []Batch
	var results []AppendResult
	seq := int32(0)
	for i := range 7 {
		b := Batch{ProducerID: pid, BaseSeq: seq, Records: recs("p", 1+i%3, 10, 0)}
		seq += int32(len(b.Records))
		batches = append(batches, b)
		results = append(results, mustAppend(t, l, b, 1))
		// Interleave a non-idempotent writer so offsets and sequences differ.
		mustAppend(t, l, Batch{Records: recs("plain", 1, 1, 0)}, 1)
	}
	end := l.EndOffset()

	// The last five are answered with their original offsets.
	for i := 2; i < 7; i++ {
		res, err := l.Append(batches[i], 9)
		if err != nil {
			t.Fatalf("retry of batch %d: %v", i, err)
		}
		want := results[i]
		want.Duplicate = true
		if res != want {
			t.Fatalf("retry of batch %d: got %+v, want %+v", i, res, want)
		}
	}
	if l.EndOffset() != end {
		t.Fatalf("retries appended records: end %d -> %d", end, l.EndOffset())
	}

	// The sixth-oldest is too old to answer.
	_, err := l.Append(batches[1], 1)
	if !errors.Is(err, ErrDuplicateSequence) || !strings.Contains(err.Error(), "older than the 5 cached batches") {
		t.Fatalf("retry of batch 1: got %v, want ErrDuplicateSequence (too old)", err)
	}
	// Reused sequences that are not a cached batch.
	_, err = l.Append(Batch{ProducerID: pid, BaseSeq: batches[5].BaseSeq + 1, Records: recs("p", 1, 1, 0)}, 1)
	if !errors.Is(err, ErrDuplicateSequence) {
		t.Fatalf("overlapping batch: got %v, want ErrDuplicateSequence", err)
	}

	// A gap names what was expected.
	_, err = l.Append(Batch{ProducerID: pid, BaseSeq: seq + 3, Records: recs("p", 1, 1, 0)}, 1)
	if !errors.Is(err, ErrOutOfOrderSequence) || !strings.Contains(err.Error(), "expected sequence 13, got 16") {
		t.Fatalf("gap: got %v, want ErrOutOfOrderSequence naming 13 and 16", err)
	}
	if l.EndOffset() != end {
		t.Fatal("rejected batches appended records")
	}

	// The next in sequence is appended.
	res := mustAppend(t, l, Batch{ProducerID: pid, BaseSeq: seq, Records: recs("p", 2, 1, 0)}, 1)
	if res.Duplicate || res.BaseOffset != end {
		t.Fatalf("next batch: %+v", res)
	}
	ps := l.Producers()
	if len(ps) != 1 || ps[0] != (ProducerState{ProducerID: pid, LastSeq: seq + 1, CachedBatches: 5}) {
		t.Fatalf("Producers() = %+v", ps)
	}
}

func TestUnknownProducerMustStartAtZero(t *testing.T) {
	l := newLog(t, Config{})
	_, err := l.Append(Batch{ProducerID: 7, BaseSeq: 5, Records: recs("u", 1, 1, 0)}, 1)
	if !errors.Is(err, ErrOutOfOrderSequence) || !strings.Contains(err.Error(), "must start at sequence 0, got 5") {
		t.Fatalf("got %v", err)
	}
	mustAppend(t, l, Batch{ProducerID: 7, BaseSeq: 0, Records: recs("u", 1, 1, 0)}, 1)
	// Producers are independent.
	mustAppend(t, l, Batch{ProducerID: 8, BaseSeq: 0, Records: recs("u", 1, 1, 0)}, 1)
	if n := len(l.Producers()); n != 2 {
		t.Fatalf("%d producers, want 2", n)
	}
}

func TestInvalidSequences(t *testing.T) {
	l := newLog(t, Config{})
	for _, b := range []Batch{
		{ProducerID: 1, BaseSeq: -1, Records: recs("s", 1, 1, 0)},
		{ProducerID: 1, BaseSeq: 1<<31 - 1, Records: recs("s", 2, 1, 0)},
	} {
		if _, err := l.Append(b, 1); !errors.Is(err, ErrInvalidBatch) {
			t.Errorf("seq %d x %d: got %v, want ErrInvalidBatch", b.BaseSeq, len(b.Records), err)
		}
	}
	// Sequences are ignored without a producer id.
	mustAppend(t, l, Batch{BaseSeq: -9, Records: recs("s", 1, 1, 0)}, 1)
}
