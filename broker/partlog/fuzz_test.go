package partlog

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func FuzzDecodeBatch(f *testing.F) {
	f.Add(EncodeBatch(Batch{Records: recs("s", 3, 10, 0)}))
	f.Add(EncodeBatch(Batch{ProducerID: 7, BaseSeq: 3, Records: []Record{{MsgID: "x"}, {Key: []byte{}, Timestamp: -9}}}))
	f.Add(EncodeBatch(Batch{}))
	f.Add([]byte{})
	f.Add(EncodeBatch(Batch{Records: []Record{{Timestamp: 1<<63 - 1}, {Timestamp: -1 << 63, Value: []byte{}}}}))
	f.Add(EncodeBatch(Batch{Records: []Record{{MsgID: "a", Headers: []Header{{Key: "k", Value: []byte("v")}, {Key: ""}}}, {Value: []byte("b")}}}))
	f.Add(EncodeBatch(Batch{Records: []Record{{Value: []byte("x"), Timestamp: -5e18}, {Value: []byte("y"), Timestamp: 5e18}}}))
	// As a leader proposes the lab's records: in Kafka's format.
	f.Add(AppendProduceBatch(nil, Batch{ProducerID: 7, Records: []Record{{MsgID: "a", Key: []byte("k"), Timestamp: 2e6, Headers: []Header{{Key: "h", Value: []byte("v")}}}, {Value: []byte{}, Timestamp: 1e6}}}))
	f.Fuzz(func(t *testing.T, p []byte) {
		// The FSM path must accept exactly what DecodeBatch accepts (less
		// empty batches), and read back the same records.
		l := newLog(t, Config{SegmentRecords: 3, IndexIntervalBytes: 2})
		res, appendErr := l.AppendEncoded(p, 7)
		b, err := DecodeBatch(p)
		if err != nil {
			if appendErr == nil {
				t.Fatalf("AppendEncoded took a batch DecodeBatch refuses (%v)", err)
			}
			return
		}
		switch {
		case len(b.Records) == 0:
			if !errors.Is(appendErr, ErrInvalidBatch) {
				t.Fatalf("empty batch: AppendEncoded said %v", appendErr)
			}
		case b.ProducerID != 0 && (errors.Is(appendErr, ErrOutOfOrderSequence) || errors.Is(appendErr, ErrInvalidBatch)):
			// A new producer must start at 0 and not pass MaxInt32.
		default:
			if appendErr != nil {
				t.Fatalf("AppendEncoded refused a batch DecodeBatch took: %v", appendErr)
			}
			if res.Count != len(b.Records) {
				t.Fatalf("AppendEncoded counted %d records, DecodeBatch %d", res.Count, len(b.Records))
			}
			got := readAll(t, l)
			for i := range b.Records {
				w := b.Records[i]
				w.Offset, w.Epoch = int64(i), 7
				if !reflect.DeepEqual(got[i], w) {
					t.Fatalf("record %d read back as %+v, decoded as %+v", i, got[i], w)
				}
			}
			for _, r := range b.Records {
				off, ok := l.OffsetForTime(r.Timestamp)
				if !ok || got[off].Timestamp < r.Timestamp {
					t.Fatalf("OffsetForTime(%d) = %d, %v", r.Timestamp, off, ok)
				}
			}
		}
		h, err := ParseBatchHeader(p)
		if err != nil || h.Count != len(b.Records) || h.ProducerID != b.ProducerID || h.BaseSeq != b.BaseSeq {
			t.Fatalf("ParseBatchHeader = %+v, %v; decoded %d records", h, err, len(b.Records))
		}

		enc := EncodeBatch(b)
		if len(enc) != cap(enc) {
			t.Fatalf("BatchSize is off by %d", cap(enc)-len(enc))
		}
		again, err := DecodeBatch(enc)
		if err != nil {
			t.Fatalf("re-decoding a decoded batch: %v", err)
		}
		if !reflect.DeepEqual(again, b) {
			t.Fatalf("round trip differs:\n got %+v\nwant %+v", again, b)
		}
		// And as a leader proposes it, in Kafka's format where it can be.
		prod := AppendProduceBatch(nil, b)
		if len(prod) != ProduceBatchSize(b) {
			t.Fatalf("ProduceBatchSize says %d bytes; AppendProduceBatch wrote %d", ProduceBatchSize(b), len(prod))
		}
		if again, err = DecodeBatch(prod); err != nil || !reflect.DeepEqual(again, b) {
			t.Fatalf("round trip in version %d differs (%v):\n got %+v\nwant %+v", prod[0], err, again, b)
		}
	})
}

func FuzzReadLog(f *testing.F) {
	// Small seeds: the fuzzer minimizes every new interesting input before
	// going on, and that is slow for inputs of kilobytes.
	small := newLog(f, Config{SegmentRecords: 2, RetentionBytes: 5, IndexIntervalBytes: 3})
	mustAppend(f, small, Batch{ProducerID: 1, Records: recs("f", 3, 2, 0)}, 1)
	mustAppend(f, small, Batch{ProducerID: 2, Records: []Record{{Timestamp: 9}, {Key: []byte{}, MsgID: "m"}}}, 2)
	small.EnforceRetention(0)
	f.Add(snapshotBytes(f, small))
	f.Add(snapshotBytes(f, new(Log)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		// With checksums, and without them so the fuzzer can reach the
		// parsers behind the CRC check.
		for _, verify := range []bool{true, false} {
			l, err := readLog(bytes.NewReader(p), verify, nil)
			if err != nil {
				continue
			}
			// Whatever decoded must encode, decode to the same log, and
			// re-encode to the same bytes.
			enc := snapshotBytes(t, l)
			again, err := ReadLog(bytes.NewReader(enc))
			if err != nil {
				t.Fatalf("re-reading a decoded log: %v", err)
			}
			assertSameLog(t, again, l)
			// And it must still work as a log.
			if _, err := l.Append(Batch{Records: []Record{{Value: []byte("v")}}}, 1); err != nil {
				t.Fatalf("append to decoded log: %v", err)
			}
			l.EnforceRetention(1 << 62)
			l.OffsetForTime(0)
			l.Window(0, 100)
		}
	})
}

// Whatever bytes a segment file holds, log dump says what it finds and
// never panics.
func FuzzLogDump(f *testing.F) {
	l, err := New(Config{IndexIntervalBytes: 1})
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	if err := l.AttachDir(dir); err != nil {
		f.Fatal(err)
	}
	for i := range 3 {
		if _, err := l.Append(Batch{Records: []Record{{Timestamp: 1e15 + int64(i), Key: []byte("k"), Value: []byte("order 881")}}}, 2); err != nil {
			f.Fatal(err)
		}
	}
	if err := l.SyncFiles(); err != nil {
		f.Fatal(err)
	}
	for _, suffix := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
		if data, err := os.ReadFile(filepath.Join(dir, SegmentFileName(0, suffix))); err == nil {
			f.Add(data)
		}
	}
	l.DetachDir()
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, suffix := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
			for _, records := range []bool{false, true} {
				DumpFile(SegmentFileName(0, suffix), data, records)
			}
		}
	})
}
