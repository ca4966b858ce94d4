package partcmd

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/mqlab/mqlab/broker/partlog"
)

// Entries carved from one block never overlap: each is capped at its size,
// so filling one to the brim and appending to it leaves the next intact.
func TestEntrySlabKeepsEntriesApart(t *testing.T) {
	var s Slab
	var entries [][]byte
	for i := range 200 {
		n := 1 + (i*7919)%(slabMaxEntry/4)
		if i%50 == 49 {
			n = slabMaxEntry + 1 // too big to carve: its own allocation
		}
		p := s.Alloc(n)
		if len(p) != 0 || cap(p) != n {
			t.Fatalf("alloc(%d): len %d cap %d, want 0 and %d", n, len(p), cap(p), n)
		}
		p = append(p, bytes.Repeat([]byte{byte(i)}, n)...)
		entries = append(entries, p)
	}
	for i := range entries {
		_ = append(entries[i], 0xff, 0xff) // must reallocate, not spill over
	}
	for i, p := range entries {
		if !bytes.Equal(p, bytes.Repeat([]byte{byte(i)}, len(p))) {
			t.Fatalf("entry %d (%d bytes) was overwritten", i, len(p))
		}
	}
}

// A produce entry built in a slab buffer is byte for byte the one built in
// its own allocation.
func TestEncodeProduceInSlab(t *testing.T) {
	var s Slab
	b := partlog.Batch{ProducerID: 3, BaseSeq: 1 << 20}
	for i := range 5 {
		b.Records = append(b.Records, partlog.Record{Timestamp: 1e18 + int64(i), Key: []byte{byte(i)}, Value: []byte(fmt.Sprint("v", i)), MsgID: fmt.Sprint("m", i)})
	}
	s.Alloc(100) // not at the start of a block
	a := EncodeProduce(1<<40, 1e18, b)
	got := EncodeProduceIn(s.Alloc, 1<<40, 1e18, b, false)
	if !bytes.Equal(a, got) || cap(got) != len(got) {
		t.Fatalf("slab entry %x (cap %d), want %x", got, cap(got), a)
	}
	// In Kafka's format, for replicas with files: also exactly its size.
	for i := range b.Records {
		b.Records[i].Timestamp = 1e18 + int64(i)*1e6
	}
	got = EncodeProduceIn(s.Alloc, 1<<40, 1e18, b, true)
	if cap(got) != len(got) {
		t.Fatalf("slab entry in Kafka's format: %d bytes, capacity %d", len(got), cap(got))
	}
	if cmd, err := Decode(got); err != nil || cmd.Kafka || cmd.Count != 5 || cmd.Batch.Records[4].MsgID != "m4" {
		t.Fatalf("Decode of the entry in Kafka's format: %+v, %v", cmd, err)
	}
}
