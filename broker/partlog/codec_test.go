package partlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
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
	// here), one length byte each for key, value and MsgID.
	if n := len(EncodeBatch(b)); n > payload+100*8+16 {
		t.Fatalf("encoding is %d bytes for %d bytes of payload: more than 8 bytes of overhead a record", n, payload)
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
	bad := bytes.Clone(good)
	bad[0] = 2
	if _, err := DecodeBatch(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("unknown version: %v", err)
	}
	// A record count of 2^62 must be refused before allocating anything.
	huge := []byte{batchVersion, 0, 0}
	huge = binary.AppendUvarint(huge, 1<<62)
	huge = append(huge, 0, 0, 0, 0, 0)
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
	// The FSM path: encode on the leader, decode on every replica, append.
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
