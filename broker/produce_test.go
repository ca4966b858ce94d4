package broker

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/partcmd"
	"github.com/mqlab/mqlab/broker/partlog"
)

// TestApplyStoresTheEntry checks the FSM path: a produce entry's batch is
// kept as it is (records read back point into the raft entry), a damaged
// one is refused as a bad command.
func TestApplyStoresTheEntry(t *testing.T) {
	t.Parallel()
	for _, files := range []bool{false, true} {
		t.Run(fmt.Sprint("files=", files), func(t *testing.T) { applyStoresTheEntry(t, files) })
	}
}

// applyStoresTheEntry is TestApplyStoresTheEntry with the entry in the
// form a leader proposes for replicas with files (Kafka's) or without.
func applyStoresTheEntry(t *testing.T, files bool) {
	pl, err := partlog.New(partlog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := &partitionFSM{rep: &replica{group: "t/0"}, log: pl}
	now := time.Unix(1_700_000_000, 0).UnixNano()
	var recs []partlog.Record
	for i := range 20 {
		recs = append(recs, partlog.Record{Timestamp: now, Value: []byte(fmt.Sprintf("value %02d", i)), MsgID: fmt.Sprint("m", i)})
	}
	data := partcmd.EncodeProduceIn(func(n int) []byte { return make([]byte, 0, n) }, 1, now, partlog.Batch{ProducerID: 3, Records: recs}, files)
	res, ok := f.Apply(&raft.Log{Index: 5, Term: 2, Type: raft.LogCommand, Data: data}).(applyResult)
	if !ok || res.err != nil || res.res.BaseOffset != 0 || res.res.Count != 20 || res.epoch != 2 {
		t.Fatalf("Apply = %+v", res)
	}
	got, err := pl.Read(0, 100)
	if err != nil || len(got) != 20 {
		t.Fatalf("Read: %d records, %v", len(got), err)
	}
	for i, r := range got {
		if r.Offset != int64(i) || r.Epoch != 2 || string(r.Value) != string(recs[i].Value) || r.MsgID != recs[i].MsgID || r.Timestamp != now {
			t.Fatalf("record %d: %+v", i, r)
		}
		if k := bytes.Index(data, r.Value); k < 0 || &data[k] != &r.Value[0] {
			t.Fatalf("record %d's value is not the raft entry's own bytes", i)
		}
	}
	// A retry is answered with the original offsets and epoch.
	res, _ = f.Apply(&raft.Log{Index: 6, Term: 3, Type: raft.LogCommand, Data: data}).(applyResult)
	if res.err != nil || !res.res.Duplicate || res.res.BaseOffset != 0 || res.epoch != 2 {
		t.Fatalf("retry: %+v", res)
	}
	// A batch whose records are damaged is a bad command; nothing is written.
	bad := bytes.Clone(data)
	if files {
		// The last record ends with its id header: the id's length now
		// runs past the end.
		bad[len(bad)-len(recs[19].MsgID)-1] = 0x80
	} else {
		bad[len(bad)-1] = 0x80 // the last varint now runs off the end
	}
	res, _ = f.Apply(&raft.Log{Index: 7, Term: 3, Type: raft.LogCommand, Data: bad}).(applyResult)
	if !errors.Is(res.err, partcmd.ErrBad) {
		t.Fatalf("damaged entry: %v", res.err)
	}
	// So is one whose header counts other records than its batch holds:
	// the replica's count of its uncommitted tail would be wrong.
	lie := []byte{partcmd.Produce}
	lie = binary.AppendUvarint(lie, 9)
	lie = binary.AppendVarint(lie, now)
	lie = binary.AppendUvarint(lie, 19)
	lie = append(lie, partlog.EncodeBatch(partlog.Batch{Records: recs})...)
	if cmd, _, err := partcmd.DecodeHeader(lie); err != nil || cmd.Count != 19 {
		t.Fatalf("partcmd.DecodeHeader of the lying entry: %+v, %v", cmd, err)
	}
	if _, err := partcmd.Decode(lie); !errors.Is(err, partcmd.ErrBad) {
		t.Fatalf("partcmd.Decode of the lying entry: %v", err)
	}
	res, _ = f.Apply(&raft.Log{Index: 8, Term: 3, Type: raft.LogCommand, Data: lie}).(applyResult)
	if !errors.Is(res.err, partcmd.ErrBad) {
		t.Fatalf("entry with a wrong count: %v", res.err)
	}
	if _, hwm, applied := f.state(); hwm != 20 || applied != 8 {
		t.Fatalf("after the refused entries: hwm %d, applied %d; want 20, 8", hwm, applied)
	}
}

// TestProduceRoutesMixedCalls sends one call with messages for several
// topics and partitions, keyed, pinned, round-robin and unroutable, and
// checks every message's result lands in its own slot.
func TestProduceRoutesMixedCalls(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	mustCreate(t, c, TopicConfig{Name: "a", Partitions: 3, RF: 3})
	mustCreate(t, c, TopicConfig{Name: "b", Partitions: 1, RF: 3})
	p := mustProducer(t, c, ProducerConfig{ClientID: "mixed", Acks: AcksAll, Idempotent: true, BatchSize: 4})
	var msgs []Message
	for i := range 30 {
		m := Message{Value: []byte(fmt.Sprint("v", i)), MsgID: fmt.Sprint("mixed:", i)}
		switch i % 5 {
		case 0:
			m.Topic, m.Key = "a", []byte(fmt.Sprint("key", i%7))
		case 1:
			m.Topic, m.Pinned, m.Partition = "a", true, i%3
		case 2:
			m.Topic = "a" // round robin
		case 3:
			m.Topic = "b"
		case 4:
			if i%2 == 0 {
				m.Topic = "nope"
			} else {
				m.Topic, m.Pinned, m.Partition = "b", true, 1
			}
		}
		msgs = append(msgs, m)
	}
	res := p.Produce(ctxFor(t, 30*time.Second), msgs...)
	seen := map[TopicPartition]int64{}
	for i, r := range res {
		m := msgs[i]
		if m.Topic == "nope" || (m.Topic == "b" && m.Pinned) {
			if r.Outcome != OutcomeFailed || r.Err == nil || r.Offset != -1 {
				t.Fatalf("message %d to %s: %+v, want failed", i, m.Topic, r)
			}
			continue
		}
		if r.Outcome != OutcomeAcked || r.Err != nil {
			t.Fatalf("message %d: %+v", i, r)
		}
		tp := TopicPartition{m.Topic, r.Partition}
		if m.Pinned && r.Partition != m.Partition || m.Key != nil && r.Partition != partlog.PartitionForKey(m.Key, 3) {
			t.Fatalf("message %d went to %s", i, tp)
		}
		// Within a partition, messages keep the call's order.
		if next, ok := seen[tp]; ok && r.Offset != next {
			t.Fatalf("message %d at %s offset %d, want %d", i, tp, r.Offset, next)
		}
		seen[tp] = r.Offset + 1
		recs := readAll(t, c, tp)
		if got := recs[r.Offset]; got.MsgID != m.MsgID || string(got.Value) != string(m.Value) {
			t.Fatalf("message %d: the log has %+v at %s offset %d", i, got, tp, r.Offset)
		}
	}
}
