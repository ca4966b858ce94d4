package queue

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

const sec = int64(time.Second)

// t0 is an arbitrary start of the test clock.
const t0 = int64(1_700_000_000) * sec

// harness drives a queue and checks its invariants after every command.
type harness struct {
	t *testing.T
	q *Queue
}

func newHarness(t *testing.T, cfg Config) *harness {
	if cfg.Name == "" {
		cfg.Name = "jobs"
	}
	if cfg.Visibility == 0 {
		cfg.Visibility = 30 * time.Second
	}
	return &harness{t: t, q: New(cfg)}
}

func (h *harness) apply(cmd Command) Result {
	h.t.Helper()
	// Every command goes through the wire form, as it does in raft.
	dec, err := DecodeCommand(cmd.Encode())
	if err != nil {
		h.t.Fatalf("decode %v: %v", cmd.Op, err)
	}
	res := h.q.Apply(dec)
	checkInvariants(h.t, h.q)
	return res
}

func (h *harness) send(at int64, bodies ...string) []SendOutcome {
	h.t.Helper()
	var msgs []NewMessage
	for _, b := range bodies {
		msgs = append(msgs, NewMessage{MsgID: "client-" + b, Body: []byte(b)})
	}
	res := h.apply(Command{Op: OpSend, Now: at, Messages: msgs})
	if res.Err != nil {
		h.t.Fatalf("send: %v", res.Err)
	}
	return res.Sent
}

func (h *harness) receive(at int64, consumer string, max int) []Delivery {
	h.t.Helper()
	res := h.apply(Command{Op: OpReceive, Now: at, Consumer: consumer, Max: max})
	if res.Err != nil {
		h.t.Fatalf("receive: %v", res.Err)
	}
	return res.Delivered
}

func (h *harness) settle(op Op, at int64, receipt string, mod func(*Command)) error {
	h.t.Helper()
	cmd := Command{Op: op, Now: at, Receipts: []string{receipt}}
	if mod != nil {
		mod(&cmd)
	}
	res := h.apply(cmd)
	if res.Err != nil {
		return res.Err
	}
	return res.Errs[0]
}

func (h *harness) ack(at int64, receipt string) error { return h.settle(OpAck, at, receipt, nil) }

// checkInvariants recounts the state from the messages themselves and
// checks the counters, the accounting identity, and the snapshot round trip.
func checkInvariants(t *testing.T, q *Queue) {
	t.Helper()
	var c Counts
	by := map[string]int{}
	for _, m := range q.msgs {
		switch m.State {
		case Ready:
			c.Ready++
		case InFlight:
			c.InFlight++
			by[m.Consumer]++
		case Delayed:
			c.Delayed++
		case Moving:
			c.Moving++
		default:
			t.Fatalf("message %d in state %v", m.Seq, m.State)
		}
	}
	got := q.counts
	if got.Ready != c.Ready || got.InFlight != c.InFlight || got.Delayed != c.Delayed || got.Moving != c.Moving {
		t.Fatalf("gauges %+v disagree with the messages: ready %d in flight %d delayed %d moving %d", got, c.Ready, c.InFlight, c.Delayed, c.Moving)
	}
	if !reflect.DeepEqual(by, q.inflightBy) && !(len(by) == 0 && len(q.inflightBy) == 0) {
		t.Fatalf("in flight per consumer %v, counted %v", q.inflightBy, by)
	}
	if ok, in, out := got.Balanced(); !ok {
		t.Fatalf("accounting broken: sent+moved in = %d, acked+dead-lettered+redriven+expired+held = %d (%+v)", in, out, got)
	}
	live := 0
	for _, s := range q.order[q.head:] {
		if q.msgs[s] != nil {
			live++
		}
	}
	if live != len(q.msgs) {
		t.Fatalf("arrival order lists %d live messages, the queue holds %d", live, len(q.msgs))
	}
}

// sameState compares two queues by their encoded snapshots.
func sameState(t *testing.T, a, b *Queue) {
	t.Helper()
	ea, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	eb, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ea, eb) {
		t.Fatalf("states differ:\n%s\n%s", ea, eb)
	}
}

func TestSendReceiveAck(t *testing.T) {
	h := newHarness(t, Config{})
	sent := h.send(t0, "a", "b", "c")
	if sent[0].Seq != 1 || sent[2].Seq != 3 {
		t.Fatalf("sequence numbers %+v", sent)
	}
	d := h.receive(t0+sec, "w1", 2)
	if len(d) != 2 || string(d[0].Body) != "a" || string(d[1].Body) != "b" {
		t.Fatalf("deliveries %+v; want a and b, oldest first", d)
	}
	if d[0].ReceiveCount != 1 || d[0].Receipt != "m1-r1" || d[0].Deadline != t0+sec+30*sec || d[0].ReceivedAt != t0+sec {
		t.Fatalf("delivery %+v", d[0])
	}
	// Competing consumers: what w1 holds is invisible to w2.
	d2 := h.receive(t0+2*sec, "w2", 10)
	if len(d2) != 1 || string(d2[0].Body) != "c" {
		t.Fatalf("w2 got %+v; want only c", d2)
	}
	for _, x := range append(d, d2...) {
		if err := h.ack(t0+3*sec, x.Receipt); err != nil {
			t.Fatal(err)
		}
	}
	c := h.q.Counts()
	if c.Acked != 3 || c.Held() != 0 || c.Deliveries != 3 {
		t.Fatalf("counts %+v", c)
	}
	// An ack repeated after its reply was lost still succeeds.
	if err := h.ack(t0+4*sec, d[0].Receipt); err != nil {
		t.Fatalf("repeated ack: %v", err)
	}
	if h.q.Counts().Acked != 3 {
		t.Fatal("a repeated ack counted twice")
	}
}

func TestVisibilityTimeoutRedelivers(t *testing.T) {
	h := newHarness(t, Config{Visibility: 10 * time.Second})
	h.send(t0, "a")
	first := h.receive(t0, "w1", 1)[0]
	if got := h.receive(t0+9*sec, "w2", 1); len(got) != 0 {
		t.Fatalf("delivered again before the deadline: %+v", got)
	}
	// A tick at the deadline puts it back; nobody needs to ask first.
	res := h.apply(Command{Op: OpTick, Now: t0 + 10*sec})
	if len(res.Changes) != 1 || res.Changes[0].Kind != ChTimedOut || h.q.Counts().Ready != 1 {
		t.Fatalf("tick at the deadline: %+v, counts %+v", res.Changes, h.q.Counts())
	}
	second := h.receive(t0+11*sec, "w2", 1)[0]
	if second.Seq != first.Seq || second.ReceiveCount != 2 || second.Receipt != "m1-r2" {
		t.Fatalf("redelivery %+v", second)
	}
	err := h.ack(t0+12*sec, first.Receipt)
	if !errors.Is(err, ErrStaleReceipt) || !strings.Contains(err.Error(), "receive 2") {
		t.Fatalf("late ack with the first receipt: %v", err)
	}
	if err := h.ack(t0+12*sec, second.Receipt); err != nil {
		t.Fatal(err)
	}
	c := h.q.Counts()
	if c.Timeouts != 1 || c.Redeliveries != 1 || c.Acked != 1 {
		t.Fatalf("counts %+v", c)
	}
}

func TestLateAckBeforeRedeliveryStillDeletes(t *testing.T) {
	h := newHarness(t, Config{Visibility: 10 * time.Second})
	h.send(t0, "a")
	d := h.receive(t0, "w1", 1)[0]
	h.apply(Command{Op: OpTick, Now: t0 + 11*sec})
	if err := h.settle(OpNack, t0+11*sec, d.Receipt, nil); !errors.Is(err, ErrStaleReceipt) {
		t.Fatalf("nack after the timeout ran out: %v", err)
	}
	if err := h.ack(t0+12*sec, d.Receipt); err != nil {
		t.Fatalf("ack after the timeout but before anyone else received it: %v", err)
	}
	if c := h.q.Counts(); c.Acked != 1 || c.Held() != 0 {
		t.Fatalf("counts %+v", c)
	}
}

func TestMaxReceivesDeadLetters(t *testing.T) {
	h := newHarness(t, Config{Visibility: 5 * time.Second, MaxReceives: 3, DLQ: "jobs-dlq"})
	h.send(t0, "poison", "ok1", "ok2", "ok3")
	now := t0
	var acked []string
	for round := 1; round <= 3; round++ {
		ds := h.receive(now, "w1", 2)
		for _, d := range ds {
			if string(d.Body) == "poison" {
				if d.ReceiveCount != round {
					t.Fatalf("round %d: poison receive count %d", round, d.ReceiveCount)
				}
				if err := h.settle(OpNack, now, d.Receipt, func(c *Command) { c.Reason = "cannot parse" }); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := h.ack(now, d.Receipt); err != nil {
				t.Fatal(err)
			}
			acked = append(acked, string(d.Body))
		}
		now += sec
	}
	// The poison went back in front each time and the others flowed past it.
	if len(acked) != 3 {
		t.Fatalf("acked %v; the messages behind the poison should flow", acked)
	}
	c := h.q.Counts()
	if c.Moving != 1 || c.Ready != 0 {
		t.Fatalf("after 3 failed receives: %+v; want the poison moving", c)
	}
	out := h.q.Outbox()
	if len(out) != 1 || out[0].To != "jobs-dlq" || out[0].Kind != DeadLetter || out[0].Transfer.ReceiveCount != 3 ||
		out[0].Transfer.LastError != "cannot parse" || out[0].Transfer.Source != "jobs" || out[0].TransferID != "jobs#1" {
		t.Fatalf("outbox %+v", out)
	}
	// Nobody can receive or settle a moving message.
	if got := h.receive(now, "w1", 10); len(got) != 0 {
		t.Fatalf("received a moving message: %+v", got)
	}
	// The DLQ takes it, once, however often it is handed over.
	dlq := newHarness(t, Config{Name: "jobs-dlq"})
	in := Command{Op: OpTransferIn, Now: now, TransferID: out[0].TransferID, Kind: out[0].Kind, Transfer: out[0].Transfer}
	r1 := dlq.apply(in)
	r2 := dlq.apply(in)
	if r1.Err != nil || r1.Duplicate || !r2.Duplicate || r2.Seq != r1.Seq {
		t.Fatalf("transfer twice: %+v then %+v", r1, r2)
	}
	if c := dlq.q.Counts(); c.MovedIn != 1 || c.Ready != 1 {
		t.Fatalf("dlq counts %+v", c)
	}
	// The source drops it once the DLQ confirmed; a repeat changes nothing.
	moved := Command{Op: OpMoved, Now: now, Seq: out[0].Seq, TransferID: out[0].TransferID}
	h.apply(moved)
	h.apply(moved)
	if c := h.q.Counts(); c.DeadLettered != 1 || c.Held() != 0 || c.Acked != 3 {
		t.Fatalf("source counts %+v", c)
	}
	dl := dlq.receive(now, "inspector", 1)[0]
	if dl.MsgID != "client-poison" || dl.ReceiveCount != 4 || dl.LastError != "cannot parse" || dl.Source != "jobs" {
		t.Fatalf("dead letter as received from the DLQ %+v (receive count 3 kept, +1 for this receive)", dl)
	}
}

func TestDeadLetterAtOnceAndRedrive(t *testing.T) {
	h := newHarness(t, Config{MaxReceives: 5, DLQ: "dlq"})
	h.send(t0, "permanent")
	d := h.receive(t0, "w1", 1)[0]
	if err := h.settle(OpDeadLetter, t0, d.Receipt, func(c *Command) { c.Reason = "card declined" }); err != nil {
		t.Fatal(err)
	}
	out := h.q.Outbox()
	if len(out) != 1 || out[0].Transfer.LastError != "card declined" {
		t.Fatalf("outbox %+v", out)
	}
	dlq := newHarness(t, Config{Name: "dlq"})
	dlq.apply(Command{Op: OpTransferIn, Now: t0, TransferID: out[0].TransferID, Kind: DeadLetter, Transfer: out[0].Transfer})
	h.apply(Command{Op: OpMoved, Now: t0, Seq: out[0].Seq, TransferID: out[0].TransferID})

	res := dlq.apply(Command{Op: OpRedrive, Now: t0 + sec})
	if res.Err != nil || res.Redriving != 1 {
		t.Fatalf("redrive %+v", res)
	}
	back := dlq.q.Outbox()
	if len(back) != 1 || back[0].To != "jobs" || back[0].Kind != Redrive {
		t.Fatalf("redrive outbox %+v", back)
	}
	r := h.apply(Command{Op: OpTransferIn, Now: t0 + sec, TransferID: back[0].TransferID, Kind: Redrive, Transfer: back[0].Transfer})
	dlq.apply(Command{Op: OpMoved, Now: t0 + sec, Seq: back[0].Seq, TransferID: back[0].TransferID})
	if r.Seq == d.Seq {
		t.Fatal("a redriven message must get a new number in its queue")
	}
	again := h.receive(t0+2*sec, "w1", 1)[0]
	if again.MsgID != "client-permanent" || again.ReceiveCount != 1 || again.Redrives != 1 {
		t.Fatalf("redriven delivery %+v; want the same id, receives starting afresh", again)
	}
	if c := h.q.Counts(); c.Sent != 1 || c.MovedIn != 1 || c.DeadLettered != 1 || c.InFlight != 1 {
		t.Fatalf("source counts %+v", c)
	}
	if c := dlq.q.Counts(); c.MovedIn != 1 || c.Redriven != 1 || c.Held() != 0 {
		t.Fatalf("dlq counts %+v", c)
	}
	// The old receipt belongs to a message that left.
	if err := h.ack(t0+3*sec, d.Receipt); !errors.Is(err, ErrUnknownReceipt) {
		t.Fatalf("ack with a receipt from before the move: %v", err)
	}
}

func TestMaxLengthRejects(t *testing.T) {
	h := newHarness(t, Config{MaxLength: 2})
	res := h.send(t0, "a", "b", "c")
	if res[0].Err != nil || res[1].Err != nil || !errors.Is(res[2].Err, ErrFull) {
		t.Fatalf("send 3 into room for 2: %+v", res)
	}
	if !strings.Contains(res[2].Err.Error(), "jobs holds 2 messages") {
		t.Fatalf("rejection should say which queue and how full: %v", res[2].Err)
	}
	d := h.receive(t0, "w", 1)[0]
	if r := h.send(t0, "d"); !errors.Is(r[0].Err, ErrFull) {
		t.Fatal("an in-flight message still takes room")
	}
	h.ack(t0, d.Receipt)
	if r := h.send(t0, "e"); r[0].Err != nil {
		t.Fatalf("after an ack: %v", r[0].Err)
	}
	if c := h.q.Counts(); c.Rejected != 2 || c.Sent != 3 {
		t.Fatalf("counts %+v", c)
	}
}

// With overflow drop-head, a send to a full queue drops the oldest ready
// message to make room, as RabbitMQ does by default; a message in flight
// is never dropped, so with none ready the send is refused. Every message
// is still accounted for.
func TestMaxLengthDropsHead(t *testing.T) {
	h := newHarness(t, Config{MaxLength: 2, Overflow: OverflowDropHead})
	res := h.send(t0, "a", "b", "c")
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("send %d into a drop-head queue: %v", i, r.Err)
		}
	}
	d := h.receive(t0, "w", 1)[0]
	if d.MsgID != "client-b" {
		t.Fatalf("received %s first; a was dropped, so b is the oldest", d.MsgID)
	}
	res2 := h.apply(Command{Op: OpSend, Now: t0, Messages: []NewMessage{{MsgID: "client-d"}}})
	var dropped []string
	for _, ch := range res2.Changes {
		if ch.Kind == ChDropped {
			dropped = append(dropped, ch.MsgID)
			if !strings.Contains(ch.Reason, "oldest ready message") {
				t.Errorf("the drop does not say why: %q", ch.Reason)
			}
		}
	}
	if len(dropped) != 1 || dropped[0] != "client-c" {
		t.Fatalf("sending d dropped %v; want c, the oldest ready (b is in flight)", dropped)
	}
	h.receive(t0, "w", 1) // d in flight too: nothing ready to drop
	if r := h.send(t0, "e"); !errors.Is(r[0].Err, ErrFull) {
		t.Fatalf("a full queue with nothing ready took e: %v", r[0].Err)
	}
	c := h.q.Counts()
	if c.Dropped != 2 || c.Rejected != 1 || c.Sent != 4 {
		t.Fatalf("counts %+v", c)
	}
	if ok, in, out := c.Balanced(); !ok {
		t.Fatalf("the counts do not balance: %d in, %d out", in, out)
	}
}

func TestTTLExpires(t *testing.T) {
	h := newHarness(t, Config{TTL: time.Minute, Visibility: 10 * time.Second})
	// A delayed message whose ttl passes while it waits is dropped then.
	h.send(t0, "old")
	old := h.receive(t0+50*sec, "w", 1)[0]
	h.settle(OpNack, t0+55*sec, old.Receipt, func(c *Command) { c.Delay = 30 * time.Second })
	res := h.apply(Command{Op: OpTick, Now: t0 + 61*sec})
	if len(res.Changes) != 1 || res.Changes[0].Kind != ChExpired || res.Changes[0].MsgID != "client-old" {
		t.Fatalf("tick past old's ttl: %+v", res.Changes)
	}
	// An in-flight message is not taken from its consumer, but when its
	// timeout runs out past its ttl it is dropped, not delivered again.
	h.send(t0+100*sec, "slow")
	slow := h.receive(t0+155*sec, "w", 1)[0]
	if got := h.receive(t0+170*sec, "w2", 1); len(got) != 0 {
		t.Fatalf("slow came back past its ttl: %+v", got)
	}
	if err := h.ack(t0+170*sec, slow.Receipt); !errors.Is(err, ErrUnknownReceipt) {
		t.Fatalf("ack of an expired message: %v", err)
	}
	// A receive never hands out a message past its ttl, tick or no tick.
	h.send(t0+200*sec, "forgotten")
	h.send(t0+230*sec, "fresh")
	got := h.receive(t0+261*sec, "w", 10)
	if len(got) != 1 || string(got[0].Body) != "fresh" {
		t.Fatalf("receive at 261s: %+v; want only fresh", got)
	}
	if c := h.q.Counts(); c.Expired != 3 || c.Deliveries != 3 || c.InFlight != 1 {
		t.Fatalf("counts %+v", c)
	}
}

func TestDelayAndNackDelay(t *testing.T) {
	h := newHarness(t, Config{})
	h.apply(Command{Op: OpSend, Now: t0, Messages: []NewMessage{{MsgID: "x", Body: []byte("x"), Delay: 5 * time.Second}}})
	if c := h.q.Counts(); c.Delayed != 1 {
		t.Fatalf("counts %+v", c)
	}
	if !h.q.CanDeliver(t0+5*sec, "w", 0) || h.q.CanDeliver(t0+4*sec, "w", 0) {
		t.Fatal("CanDeliver should turn true when the delay is over")
	}
	if got := h.receive(t0+4*sec, "w", 1); len(got) != 0 {
		t.Fatal("delivered before its delay")
	}
	d := h.receive(t0+5*sec, "w", 1)
	if len(d) != 1 {
		t.Fatal("not delivered after its delay")
	}
	h.settle(OpNack, t0+6*sec, d[0].Receipt, func(c *Command) { c.Delay = 3 * time.Second })
	if got := h.receive(t0+8*sec, "w", 1); len(got) != 0 {
		t.Fatal("delivered during its nack delay")
	}
	if got := h.receive(t0+9*sec, "w", 1); len(got) != 1 || got[0].ReceiveCount != 2 {
		t.Fatalf("after the nack delay: %+v", got)
	}
}

func TestChangeVisibility(t *testing.T) {
	h := newHarness(t, Config{Visibility: 10 * time.Second})
	h.send(t0, "a", "b")
	d := h.receive(t0, "w", 2)
	if err := h.settle(OpChangeVisibility, t0+5*sec, d[0].Receipt, func(c *Command) { c.Visibility = time.Minute }); err != nil {
		t.Fatal(err)
	}
	m, _ := h.q.Get(d[0].Seq)
	if m.Due != t0+65*sec {
		t.Fatalf("deadline %d, want now+1m", m.Due-t0)
	}
	// Zero gives it back at once.
	if err := h.settle(OpChangeVisibility, t0+6*sec, d[1].Receipt, func(c *Command) { c.Visibility = 0 }); err != nil {
		t.Fatal(err)
	}
	got := h.receive(t0+6*sec, "w2", 10)
	if len(got) != 1 || got[0].Seq != d[1].Seq {
		t.Fatalf("after visibility 0: %+v", got)
	}
	h.ack(t0+6*sec, got[0].Receipt)
	// The extended one did not come back at its old deadline.
	if got := h.receive(t0+20*sec, "w2", 10); len(got) != 0 {
		t.Fatalf("came back at the old deadline: %+v", got)
	}
}

func TestPrefetchLimit(t *testing.T) {
	h := newHarness(t, Config{})
	h.send(t0, "a", "b", "c", "d")
	res := h.apply(Command{Op: OpReceive, Now: t0, Consumer: "w", Max: 10, Limit: 3})
	if len(res.Delivered) != 3 {
		t.Fatalf("got %d, want the prefetch limit 3", len(res.Delivered))
	}
	if h.q.CanDeliver(t0, "w", 3) || !h.q.CanDeliver(t0, "other", 3) {
		t.Fatal("CanDeliver ignores the prefetch limit")
	}
	res = h.apply(Command{Op: OpReceive, Now: t0, Consumer: "w", Max: 10, Limit: 3})
	if len(res.Delivered) != 0 {
		t.Fatal("w got more than its limit")
	}
	h.ack(t0, Receipt(1, 1))
	res = h.apply(Command{Op: OpReceive, Now: t0, Consumer: "w", Max: 10, Limit: 3})
	if len(res.Delivered) != 1 {
		t.Fatalf("after one ack w should get one more, got %d", len(res.Delivered))
	}
}

func TestBadReceipts(t *testing.T) {
	h := newHarness(t, Config{})
	h.send(t0, "a")
	d := h.receive(t0, "w", 1)[0]
	for _, c := range []struct {
		receipt string
		want    error
		text    string
	}{
		{"nonsense", ErrUnknownReceipt, "look like m7-r2"},
		{"m0-r1", ErrUnknownReceipt, "look like"},
		{"m9-r1", ErrUnknownReceipt, "never held a message 9"},
		{"m1-r5", ErrUnknownReceipt, "received only 1 times"},
	} {
		err := h.ack(t0, c.receipt)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("ack %q: %v; want %v mentioning %q", c.receipt, err, c.want, c.text)
		}
	}
	h.ack(t0, d.Receipt)
	if err := h.settle(OpNack, t0, d.Receipt, nil); !errors.Is(err, ErrUnknownReceipt) || !strings.Contains(err.Error(), "no longer in queue jobs") {
		t.Errorf("nack after ack: %v", err)
	}
	res := h.apply(Command{Op: OpDeadLetter, Now: t0, Receipts: []string{d.Receipt}})
	if !errors.Is(res.Err, ErrNoDLQ) {
		t.Errorf("dead-letter without a DLQ: %v", res.Err)
	}
	res = h.apply(Command{Op: OpNack, Now: t0, Receipts: []string{d.Receipt}, Delay: -time.Second})
	if !errors.Is(res.Err, ErrBadCommand) {
		t.Errorf("negative nack delay: %v", res.Err)
	}
	res = h.apply(Command{Op: OpReceive, Now: t0, Consumer: "w", Max: 1, Visibility: -time.Second})
	if !errors.Is(res.Err, ErrBadCommand) {
		t.Errorf("negative visibility: %v", res.Err)
	}
}

func TestClockNeverGoesBack(t *testing.T) {
	h := newHarness(t, Config{Visibility: 10 * time.Second})
	h.send(t0, "a")
	h.receive(t0+20*sec, "w", 1) // deadline t0+30s
	// A command stamped earlier (a new leader whose clock lags) does not
	// move time back: the deadline stays ahead.
	if got := h.receive(t0+5*sec, "w2", 1); len(got) != 0 {
		t.Fatal("delivered again")
	}
	if h.q.Now() != t0+20*sec {
		t.Fatalf("now %d", h.q.Now()-t0)
	}
}

func TestCodecRoundTrip(t *testing.T) {
	cmds := []Command{
		{Op: OpSend, Now: t0, Messages: []NewMessage{{MsgID: "p-1", Body: []byte("hello"), Attributes: map[string]string{"k": "v", "a": ""}, Delay: time.Second}, {MsgID: "p-2"}}},
		{Op: OpReceive, Now: -5, ReqID: 1 << 40, Consumer: "w1", Max: 10, Visibility: time.Minute, Limit: 4},
		{Op: OpAck, Now: 1, Receipts: []string{"m1-r1", "m2-r3"}},
		{Op: OpNack, Now: 1, Receipts: []string{"m1-r1"}, Delay: time.Second, Reason: "boom"},
		{Op: OpChangeVisibility, Now: 1, Receipts: []string{"m1-r1"}, Visibility: 3 * time.Second},
		{Op: OpDeadLetter, Now: 1, Receipts: []string{"m1-r1"}, Reason: "bad"},
		{Op: OpTick, Now: 99},
		{Op: OpTransferIn, Now: 2, TransferID: "jobs#4", Kind: DeadLetter, Transfer: Transfer{MsgID: "x", Body: []byte{0, 1}, SentAt: 7, ReceiveCount: 3, LastError: "e", Source: "jobs", Redrives: 1}},
		{Op: OpMoved, Now: 3, Seq: 4, TransferID: "jobs#4"},
		{Op: OpRedrive, Now: 4, To: "jobs", Max: 10},
	}
	for _, c := range cmds {
		got, err := DecodeCommand(c.Encode())
		if err != nil {
			t.Fatalf("%v: %v", c.Op, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Errorf("%v round trip:\n got %+v\nwant %+v", c.Op, got, c)
		}
		// Every truncation is an error, never a panic.
		enc := c.Encode()
		for n := 0; n < len(enc); n++ {
			if _, err := DecodeCommand(enc[:n]); err == nil {
				t.Errorf("%v truncated to %d bytes decoded without error", c.Op, n)
			}
		}
	}
}

func FuzzDecodeCommand(f *testing.F) {
	f.Add(Command{Op: OpSend, Now: 1, Messages: []NewMessage{{MsgID: "a", Body: []byte("b")}}}.Encode())
	f.Add(Command{Op: OpTransferIn, TransferID: "q#1", Kind: Redrive}.Encode())
	f.Fuzz(func(t *testing.T, p []byte) {
		c, err := DecodeCommand(p)
		if err != nil {
			return
		}
		q := New(Config{Name: "q", Visibility: time.Second, TTL: time.Minute, MaxLength: 3, MaxReceives: 2, DLQ: "d"})
		q.Apply(c) // must not panic
	})
}

// Random commands, applied to one queue straight and to another that is
// snapshotted and restored every few steps, must give identical states:
// the restored heaps behave like the live ones.
func TestRandomSnapshotRestoreAgree(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		cfg := Config{Name: "jobs", Visibility: 3 * time.Second, MaxReceives: 3, DLQ: "dlq", MaxLength: 40, TTL: 40 * time.Second}
		a, b := New(cfg), New(cfg)
		now := t0
		var receipts []string
		for step := 0; step < 400; step++ {
			now += int64(rng.IntN(1500)) * int64(time.Millisecond)
			cmd := randomCommand(rng, now, receipts)
			ra, rb := a.Apply(cmd), b.Apply(cmd)
			if fmt.Sprint(ra) != fmt.Sprint(rb) {
				t.Fatalf("seed %d step %d %v: results differ\n%+v\n%+v", seed, step, cmd.Op, ra, rb)
			}
			for _, d := range ra.Delivered {
				receipts = append(receipts, d.Receipt)
			}
			for _, o := range a.Outbox() {
				if rng.IntN(2) == 0 {
					a.Apply(Command{Op: OpMoved, Now: now, Seq: o.Seq, TransferID: o.TransferID})
					b.Apply(Command{Op: OpMoved, Now: now, Seq: o.Seq, TransferID: o.TransferID})
				}
			}
			checkInvariants(t, a)
			if step%7 == 0 {
				enc, err := b.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				if b, err = Restore(enc); err != nil {
					t.Fatal(err)
				}
				checkInvariants(t, b)
			}
			sameState(t, a, b)
		}
	}
}

func randomCommand(rng *rand.Rand, now int64, receipts []string) Command {
	pick := func() string {
		if len(receipts) == 0 || rng.IntN(10) == 0 {
			return Receipt(uint64(rng.IntN(50)+1), rng.IntN(3)+1)
		}
		return receipts[rng.IntN(len(receipts))]
	}
	consumers := []string{"w1", "w2", "w3"}
	switch rng.IntN(8) {
	case 0, 1:
		var msgs []NewMessage
		for i := rng.IntN(4); i >= 0; i-- {
			msgs = append(msgs, NewMessage{MsgID: fmt.Sprint("m", rng.IntN(1000)), Body: []byte("x"), Delay: time.Duration(rng.IntN(3)) * time.Second})
		}
		return Command{Op: OpSend, Now: now, Messages: msgs}
	case 2, 3:
		return Command{Op: OpReceive, Now: now, Consumer: consumers[rng.IntN(3)], Max: rng.IntN(5) + 1, Limit: rng.IntN(4)}
	case 4:
		return Command{Op: OpAck, Now: now, Receipts: []string{pick(), pick()}}
	case 5:
		return Command{Op: OpNack, Now: now, Receipts: []string{pick()}, Delay: time.Duration(rng.IntN(3)) * time.Second, Reason: "r"}
	case 6:
		if rng.IntN(2) == 0 {
			return Command{Op: OpDeadLetter, Now: now, Receipts: []string{pick()}, Reason: "gave up"}
		}
		return Command{Op: OpChangeVisibility, Now: now, Receipts: []string{pick()}, Visibility: time.Duration(rng.IntN(4)) * time.Second}
	}
	return Command{Op: OpTick, Now: now}
}

// Acked messages leave no timer behind that would make a leader tick for
// nothing.
func TestNextDueIgnoresSettledMessages(t *testing.T) {
	h := newHarness(t, Config{Visibility: 10 * time.Second})
	h.send(t0, "a", "b")
	ds := h.receive(t0, "w", 2)
	if due, ok := h.q.NextDue(); !ok || due != t0+10*sec {
		t.Fatalf("next due %v %v; want the visibility deadline", due-t0, ok)
	}
	h.ack(t0+sec, ds[0].Receipt)
	h.ack(t0+sec, ds[1].Receipt)
	if due, ok := h.q.NextDue(); ok {
		t.Fatalf("nothing is in flight, yet a tick is due at %v", due-t0)
	}
}
