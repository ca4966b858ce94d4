package partlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestBatchCodecRoundTrip(t *testing.T) {
	for name, b := range map[string]Batch{
		"plain": {Records: recs("a", 5, 100, 1_700_000_000e9)},
		"idempotent": {ProducerID: -1 << 63, BaseSeq: 1<<31 - 1, Records: []Record{
			{Timestamp: -1 << 63, Key: nil, Value: nil},
			{Timestamp: 1<<63 - 1, Key: []byte{}, Value: []byte{}, MsgID: "x"},
			{Timestamp: 0, Key: []byte{0, 1}, Value: []byte("v"), MsgID: "client-7:12345"},
		}},
		"empty": {ProducerID: 3},
	} {
		p := EncodeBatch(b)
		got, err := DecodeBatch(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b.Records == nil {
			b.Records = []Record{}
		}
		if !reflect.DeepEqual(got, b) {
			t.Fatalf("%s: round trip\n got %+v\nwant %+v", name, got, b)
		}
		if len(p) != cap(p) {
			t.Fatalf("%s: EncodeBatch left %d bytes of spare capacity", name, cap(p)-len(p))
		}
		if !bytes.Equal(AppendBatch([]byte("prefix"), b)[6:], p) {
			t.Fatalf("%s: AppendBatch and EncodeBatch disagree", name)
		}
	}
}

func TestBatchEncodingIsCompact(t *testing.T) {
	b := Batch{ProducerID: 12345, BaseSeq: 1000, Records: recs("c", 100, 100, 1_700_000_000e9)}
	var payload int
	for _, r := range b.Records {
		payload += len(r.Key) + len(r.Value) + len(r.MsgID)
	}
	// Per record: 5 bytes of timestamp delta (records are a second apart
	// here), one length byte each for key, value and MsgID; the header
	// carries the producer, sequence, count and the base and max timestamps.
	if n := len(EncodeBatch(b)); n > payload+100*8+32 {
		t.Fatalf("encoding is %d bytes for %d bytes of payload: more than 8 bytes of overhead a record", n, payload)
	}
	// A leader stamps a whole batch with one time: one byte a record.
	for i := range b.Records {
		b.Records[i].Timestamp = 1_700_000_000e9
	}
	if n := len(EncodeBatch(b)); n > payload+100*4+32 {
		t.Fatalf("encoding of a batch stamped at one time is %d bytes for %d bytes of payload: more than 4 bytes of overhead a record", n, payload)
	}
}

func TestDecodeBatchRejectsDamage(t *testing.T) {
	good := EncodeBatch(Batch{ProducerID: 9, BaseSeq: 4, Records: recs("d", 3, 10, 5)})
	for n := range len(good) {
		if _, err := DecodeBatch(good[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d bytes: got %v, want ErrCorrupt", n, err)
		}
	}
	if _, err := DecodeBatch(append(bytes.Clone(good), 0)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("trailing byte: %v", err)
	}
	for _, v := range []byte{1, batchVersion + 1} { // version 1 kept no timestamps in the header
		bad := bytes.Clone(good)
		bad[0] = v
		if _, err := DecodeBatch(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("version %d: %v", v, err)
		}
	}
	// A header whose max timestamp is not the records' own.
	lie := EncodeBatch(Batch{Records: []Record{{Timestamp: 5}, {Timestamp: 9}}})
	h, err := ParseBatchHeader(lie)
	if err != nil || h.Count != 2 || h.BaseTimestamp != 5 || h.MaxTimestamp != 9 {
		t.Fatalf("ParseBatchHeader = %+v, %v", h, err)
	}
	lie[bytes.IndexByte(lie, 4)] = 3 // max - base: 4 -> 3
	if _, err := DecodeBatch(lie); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "max timestamp") {
		t.Fatalf("wrong max timestamp: %v", err)
	}
	// A record count of 2^62 must be refused before allocating anything.
	huge := []byte{batchVersion, 0, 0}
	huge = binary.AppendUvarint(huge, 1<<62)
	huge = append(huge, 0, 0, 0, 0, 0, 0, 0)
	if _, err := DecodeBatch(huge); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("huge count: %v", err)
	}
	// A sequence number beyond int32.
	seq := []byte{batchVersion, 2}
	seq = binary.AppendVarint(seq, 1<<40)
	seq = append(seq, 0, 0)
	if _, err := DecodeBatch(seq); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("64-bit sequence: %v", err)
	}
}

func TestDecodedBatchAppends(t *testing.T) {
	// The decoded path: encode on the leader, decode, append.
	in := Batch{ProducerID: 5, Records: recs("f", 4, 50, 77)}
	b, err := DecodeBatch(EncodeBatch(in))
	if err != nil {
		t.Fatal(err)
	}
	l := newLog(t, Config{})
	mustAppend(t, l, b, 3)
	got := readAll(t, l)
	for i := range in.Records {
		w := in.Records[i]
		w.Offset, w.Epoch = int64(i), 3
		if !reflect.DeepEqual(got[i], w) {
			t.Fatalf("record %d: %+v, want %+v", i, got[i], w)
		}
	}
}

func TestAppendEncoded(t *testing.T) {
	// The FSM path: the raft entry's bytes are stored as they are.
	in := Batch{ProducerID: 5, Records: recs("e", 6, 50, 77)}
	data := EncodeBatch(in)
	l := newLog(t, Config{SegmentRecords: 4})
	res, err := l.AppendEncoded(data, 3)
	if err != nil || res != (AppendResult{BaseOffset: 0, Count: 6}) {
		t.Fatalf("AppendEncoded = %+v, %v", res, err)
	}
	got := readAll(t, l)
	for i := range in.Records {
		w := in.Records[i]
		w.Offset, w.Epoch = int64(i), 3
		if !reflect.DeepEqual(got[i], w) {
			t.Fatalf("record %d: %+v, want %+v", i, got[i], w)
		}
		// Zero copy: the value is the entry's own bytes.
		if v := got[i].Value; &data[bytes.Index(data, v)] != &v[0] {
			t.Fatalf("record %d's value is a copy, not a slice of the entry", i)
		}
	}
	// A retry of the same bytes is a duplicate, answered with the original.
	if res, err := l.AppendEncoded(data, 4); err != nil || !res.Duplicate || res.BaseOffset != 0 || res.Count != 6 {
		t.Fatalf("retry: %+v, %v", res, err)
	}
	// Damaged entries are errors and leave the log as it was.
	for n := range len(data) {
		if _, err := l.AppendEncoded(data[:n], 1); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
	if _, err := l.AppendEncoded(EncodeBatch(Batch{}), 1); !errors.Is(err, ErrInvalidBatch) {
		t.Fatalf("empty batch: %v", err)
	}
	if l.EndOffset() != 6 || len(l.Segments()) != 1 {
		t.Fatalf("rejected entries changed the log: end %d, segments %+v", l.EndOffset(), l.Segments())
	}
}

// Headers survive the log: a batch with them is written in the version
// that carries them, read back whole or from its middle, and damage to
// them is refused.
func TestBatchHeadersRoundTrip(t *testing.T) {
	b := Batch{Records: []Record{
		{Key: []byte("k1"), Value: []byte("v1"), Timestamp: 5, Headers: []Header{{Key: "trace", Value: []byte("abc")}, {Key: "empty", Value: []byte{}}, {Key: "nil"}}},
		{Value: []byte("v2"), Timestamp: 6},
		{Value: []byte("v3"), Timestamp: 7, Headers: []Header{{Key: "n", Value: []byte("3")}}},
	}}
	data := EncodeBatch(b)
	if data[0] != batchVersionHeaders || len(data) != BatchSize(b) {
		t.Fatalf("version %d, %d bytes (size said %d); want version %d", data[0], len(data), BatchSize(b), batchVersionHeaders)
	}
	got, err := DecodeBatch(data)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got.Records {
		want := b.Records[i]
		if len(r.Headers) != len(want.Headers) {
			t.Fatalf("record %d: %d headers; want %d", i, len(r.Headers), len(want.Headers))
		}
		for j, h := range r.Headers {
			w := want.Headers[j]
			if h.Key != w.Key || string(h.Value) != string(w.Value) || (h.Value == nil) != (w.Value == nil) {
				t.Fatalf("record %d header %d = %q=%q (nil %v); want %q=%q (nil %v)", i, j, h.Key, h.Value, h.Value == nil, w.Key, w.Value, w.Value == nil)
			}
		}
	}
	l, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendEncoded(data, 1); err != nil {
		t.Fatal(err)
	}
	recs, err := l.Read(2, 1)
	if err != nil || len(recs) != 1 || len(recs[0].Headers) != 1 || recs[0].Headers[0].Key != "n" {
		t.Fatalf("read from the middle = %+v, %v; want record 2 with its header", recs, err)
	}
	plain := EncodeBatch(Batch{Records: []Record{{Value: []byte("v")}}})
	if plain[0] != batchVersion {
		t.Fatalf("a batch without headers is written in version %d; want %d", plain[0], batchVersion)
	}
	for cut := 1; cut < len(data); cut++ {
		if _, err := DecodeBatch(data[:cut]); err == nil {
			t.Fatalf("a batch cut to %d of %d bytes decoded", cut, len(data))
		}
	}
}
