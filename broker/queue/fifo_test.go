package queue

import (
	"testing"
	"time"
)

func fifoSend(h *harness, at int64, id, group, dedupe string) SendOutcome {
	h.t.Helper()
	attrs := map[string]string{AttrGroup: group}
	if dedupe != "" {
		attrs[AttrDedupe] = dedupe
	}
	res := h.apply(Command{Op: OpSend, Now: at, Messages: []NewMessage{{MsgID: id, Body: []byte(id), Attributes: attrs}}})
	if res.Err != nil {
		h.t.Fatalf("send: %v", res.Err)
	}
	return res.Sent[0]
}

func ids(ds []Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.MsgID)
	}
	return out
}

// A FIFO queue hands a group out in order, and none of it while one of
// its messages is in flight; other groups go on.
func TestFIFOGroupsWaitForTheirMessageInFlight(t *testing.T) {
	h := newHarness(t, Config{FIFO: true, Visibility: 10 * time.Second})
	fifoSend(h, t0, "a1", "a", "")
	fifoSend(h, t0, "a2", "a", "")
	fifoSend(h, t0, "b1", "b", "")
	got := h.receive(t0, "w1", 1)
	if len(got) != 1 || got[0].MsgID != "a1" {
		t.Fatalf("first receive: %v; want a1", ids(got))
	}
	got = h.receive(t0, "w2", 10)
	if len(got) != 1 || got[0].MsgID != "b1" {
		t.Fatalf("while a1 is in flight: %v; want b1 only", ids(got))
	}
	if h.q.CanDeliver(t0, "w3", 0) {
		t.Fatal("CanDeliver says yes while every ready message's group is busy")
	}
	// a1's timeout runs out: it comes back before a2.
	got = h.receive(t0+11*sec, "w3", 10)
	if len(ids(got)) < 1 || got[0].MsgID != "a1" {
		t.Fatalf("after a1's timeout: %v; want a1 first", ids(got))
	}
	h.apply(Command{Op: OpAck, Now: t0 + 11*sec, Receipts: []string{got[0].Receipt}})
	rest := ids(got[1:])
	if len(rest) == 0 {
		rest = ids(h.receive(t0+11*sec, "w3", 10))
	}
	if len(rest) == 0 || rest[0] != "a2" {
		t.Fatalf("after a1 is acked: %v; want a2", rest)
	}
}

// A send repeating a deduplication id within five minutes is dropped and
// answered with the original; after the window it is a new message. The
// window survives a snapshot.
func TestFIFODeduplicationWindow(t *testing.T) {
	h := newHarness(t, Config{FIFO: true})
	first := fifoSend(h, t0, "m1", "g", "order-881")
	again := fifoSend(h, t0+4*60*sec, "m2", "g", "order-881")
	if !again.Duplicate || again.Seq != first.Seq || again.MsgID != "m1" {
		t.Fatalf("a repeat within the window: %+v; want the original m1 (%d)", again, first.Seq)
	}
	if c := h.q.Counts(); c.Sent != 1 || c.Ready != 1 {
		t.Fatalf("counts %+v; want one message", c)
	}
	data, err := h.q.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if h.q, err = Restore(data); err != nil {
		t.Fatal(err)
	}
	if again := fifoSend(h, t0+4*60*sec+1, "m3", "g", "order-881"); !again.Duplicate {
		t.Fatal("the window was lost in the snapshot")
	}
	later := fifoSend(h, t0+5*60*sec+1, "m4", "g", "order-881")
	if later.Duplicate || later.Seq == first.Seq {
		t.Fatalf("after the window: %+v; want a new message", later)
	}
}

// A purge drops every message held, in flight ones too, counted as
// dropped; an ack of a purged message's receipt finds nothing.
func TestPurgeDropsEverythingHeld(t *testing.T) {
	h := newHarness(t, Config{})
	h.send(t0, "a", "b", "c")
	got := h.receive(t0, "w1", 1)
	res := h.apply(Command{Op: OpPurge, Now: t0, Consumer: "admin"})
	if res.Err != nil || len(res.Changes) != 3 {
		t.Fatalf("purge: %v, %d changes; want 3 dropped", res.Err, len(res.Changes))
	}
	if c := h.q.Counts(); c.Held() != 0 || c.Dropped != 3 {
		t.Fatalf("after a purge: %+v", c)
	}
	ack := h.apply(Command{Op: OpAck, Now: t0, Receipts: []string{got[0].Receipt}})
	if ack.Errs[0] == nil {
		t.Fatal("an ack of a purged message succeeded")
	}
}
