package kafkawire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/mqlab/mqlab/broker"
)

// reCRC sets a batch's CRC to match its bytes, as a client that built
// the batch that way would.
func reCRC(b []byte) []byte {
	binary.BigEndian.PutUint32(b[17:], crc32c(b[crcFrom:]))
	return b
}

// The listener checks a producer's batch once, in one walk over its
// records, and refuses what a replica could not keep as it is, with
// Kafka's code and a sentence saying what was wrong.
func TestReadBatchRefusesWhatCannotBeKept(t *testing.T) {
	good := func() []byte { return producerBatch(-1, -1, "order 1", "order 2") }
	length := func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
		return b
	}
	for _, c := range []struct {
		name  string
		batch []byte
		code  int16
		says  string
	}{
		{"a flipped byte", func() []byte { b := good(); b[len(b)-1] ^= 1; return b }(), codeCorruptMessage, "CRC-32C"},
		{"bytes after the last record", reCRC(length(append(good(), 0))), codeCorruptMessage, "follow a batch's last record"},
		{"a record cut short", reCRC(length(good()[:len(good())-2])), codeCorruptMessage, "record 1 of a batch"},
		{"transactional", func() []byte { b := good(); b[22] |= 0x10; return reCRC(b) }(), codeInvalidRecord, "transactional"},
		{"a wrong last offset delta", func() []byte { b := good(); binary.BigEndian.PutUint32(b[23:], 5); return reCRC(b) }(), codeInvalidRecord, "last offset delta is 5"},
		{"no records", func() []byte { b := good(); binary.BigEndian.PutUint32(b[57:], 0); return reCRC(b) }(), codeInvalidRecord, "an empty batch"},
		{"a time past 2262", func() []byte { b := good(); binary.BigEndian.PutUint64(b[27:], 1<<62); return reCRC(b) }(), codeInvalidTimestamp, "first and max timestamps"},
		{"a max time past 2262", func() []byte { b := good(); binary.BigEndian.PutUint64(b[35:], 1<<62); return reCRC(b) }(), codeInvalidTimestamp, "first and max timestamps"},
		{"a record's time past 2262", func() []byte {
			b := good()
			binary.BigEndian.PutUint64(b[27:], uint64(math.MaxInt64/int64(time.Millisecond))) // the first record's delta is 0, the second's 1
			binary.BigEndian.PutUint64(b[35:], uint64(math.MaxInt64/int64(time.Millisecond)))
			return reCRC(b)
		}(), codeInvalidTimestamp, "record 1 of a batch is stamped"},
	} {
		_, err := readBatches(c.batch)
		var be *errBatch
		if !errors.As(err, &be) || be.code != c.code || !strings.Contains(be.text, c.says) {
			t.Errorf("%s: %v; want code %d saying %q", c.name, err, c.code, c.says)
		}
	}

	// A good batch: its count, keys' and values' bytes, least timestamp
	// and first record without a key, the bytes kept as they came.
	b := append(good(), keyedBatch("user-7", "trace", "order 3")...)
	got, err := readBatches(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Count != 2 || got[0].KVBytes != 14 || got[0].MinTS != 1_000_000*1e6 || got[0].Unkeyed != 0 ||
		got[1].Count != 1 || got[1].Unkeyed != -1 || got[1].KVBytes != 13 || !slices.Equal(got[1].Raw, b[len(good()):]) {
		t.Fatalf("read %+v", got)
	}
	if r := got[1].records; len(r) != 1 || string(r[0].Key) != "user-7" || len(r[0].Headers) != 1 || r[0].Headers[0].Key != "trace" {
		t.Errorf("the keyed batch's records: %+v", r)
	}

	// Snappy batches checked one after another in a connection's one
	// decompression buffer count what the same batches read alone do.
	var scratch []byte
	for i, raw := range [][]byte{snappyBatch(good()), snappyBatch(keyedBatch("user-7", "trace", "order 3")), snappyBatch(good())} {
		alone, err := readBatches(raw)
		if err != nil {
			t.Fatal(err)
		}
		shared, err := readBatchesFor("kgo", broker.TopicPartition{Topic: "orders"}, raw, false, &scratch)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := alone[0].WireBatch, shared[0].WireBatch; a.Count != b.Count || a.KVBytes != b.KVBytes || a.MinTS != b.MinTS || a.Unkeyed != b.Unkeyed || shared[0].records != nil {
			t.Errorf("snappy batch %d: %+v through the shared buffer; alone %+v", i, b, a)
		}
	}
	if cap(scratch) == 0 {
		t.Error("the connection kept no decompression buffer")
	}
}

// snappyBatch is plain's batch with its records compressed by snappy,
// as kgo sends them by default.
func snappyBatch(plain []byte) []byte {
	b := append(plain[:batchHeaderLen:batchHeaderLen], s2.EncodeSnappy(nil, plain[batchHeaderLen:])...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint16(b[21:], codecSnappy)
	return reCRC(b)
}

// BenchmarkReadBatch is the listener's check of one producer batch of
// 1,000 records of 100 bytes, as kgo sends them (snappy) and plain, with
// the records decoded and named for an observer and without; one op is
// one record.
func BenchmarkReadBatch(b *testing.B) {
	values := make([]string, 1000)
	for i := range values {
		values[i] = strings.Repeat(string(rune('a'+i%26)), 100)
	}
	plain := producerBatch(-1, -1, values...)
	snappy := snappyBatch(slices.Clone(plain))
	tp := broker.TopicPartition{Topic: "orders"}
	for _, c := range []struct {
		name  string
		batch []byte
	}{{"plain", plain}, {"snappy", snappy}} {
		for _, observed := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/observed=%v", c.name, observed), func(b *testing.B) {
				b.ReportAllocs()
				var scratch []byte // a connection's
				for b.Loop() {
					if _, err := readBatchesFor("kgo", tp, c.batch, observed, &scratch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(values)), "ns/record")
			})
		}
	}
}
