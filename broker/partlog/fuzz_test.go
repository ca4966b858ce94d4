package partlog

import (
	"bytes"
	"reflect"
	"testing"
)

func FuzzDecodeBatch(f *testing.F) {
	f.Add(EncodeBatch(Batch{Records: recs("s", 3, 10, 0)}))
	f.Add(EncodeBatch(Batch{ProducerID: 7, BaseSeq: 3, Records: []Record{{MsgID: "x"}, {Key: []byte{}, Timestamp: -9}}}))
	f.Add(EncodeBatch(Batch{}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		b, err := DecodeBatch(p)
		if err != nil {
			return
		}
		enc := EncodeBatch(b)
		if len(enc) != cap(enc) {
			t.Fatalf("batchSize is off by %d", cap(enc)-len(enc))
		}
		again, err := DecodeBatch(enc)
		if err != nil {
			t.Fatalf("re-decoding a decoded batch: %v", err)
		}
		if !reflect.DeepEqual(again, b) {
			t.Fatalf("round trip differs:\n got %+v\nwant %+v", again, b)
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
			l, err := readLog(bytes.NewReader(p), verify)
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
		}
	})
}
