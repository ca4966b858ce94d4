package queue

import (
	"container/heap"
	"fmt"
	"maps"
	"time"
)

// MaxBatch bounds the messages of one send or receive, and the receipts of
// one ack.
const MaxBatch = 100

// MaxVisibility bounds visibility timeouts and delays, as SQS does.
const MaxVisibility = 12 * time.Hour

// Remembered repeats. A destination must recognise a transfer it already
// holds until the source has recorded the move, which is a few raft round
// trips; an ack retried after a lost reply comes back within a request
// timeout. These windows are far beyond both.
const (
	transferWindow = 1 << 16
	ackWindow      = 1 << 12
)

// Queue is one queue's state. It is not safe for concurrent use; the
// broker's adapter locks around it.
type Queue struct {
	cfg     Config
	now     int64
	nextSeq uint64

	msgs  map[uint64]*Message
	order []uint64 // seqs in arrival order, with holes for messages gone
	head  int      // order[:head] are all gone

	ready  entryHeap // Ready messages by seq: the oldest first, redeliveries included
	timers entryHeap // visibility deadlines, delays and TTLs by time

	inflightBy map[string]int // consumer → messages it holds in flight
	counts     Counts

	transfers recentSet[uint64] // transfer id → seq here
	acks      recentSet[struct{}]
}

// New returns an empty queue.
func New(cfg Config) *Queue {
	return &Queue{
		cfg:        cfg,
		nextSeq:    1,
		msgs:       map[uint64]*Message{},
		inflightBy: map[string]int{},
		transfers:  newRecentSet[uint64](transferWindow),
		acks:       newRecentSet[struct{}](ackWindow),
	}
}

// Config returns the queue's configuration.
func (q *Queue) Config() Config { return q.cfg }

// Now is the latest time the queue has seen.
func (q *Queue) Now() int64 { return q.now }

// Counts returns the gauges and counters.
func (q *Queue) Counts() Counts { return q.counts }

// Apply runs one command. The same commands in the same order give the same
// state and the same results on every replica.
func (q *Queue) Apply(cmd Command) Result {
	var res Result
	q.advance(cmd.Now, &res)
	switch cmd.Op {
	case OpSend:
		q.send(cmd, &res)
	case OpReceive:
		q.receive(cmd, &res)
	case OpAck, OpNack, OpChangeVisibility, OpDeadLetter:
		q.settle(cmd, &res)
	case OpTick:
	case OpTransferIn:
		q.transferIn(cmd, &res)
	case OpMoved:
		q.moved(cmd, &res)
	case OpRedrive:
		q.redrive(cmd, &res)
	default:
		res.Err = fmt.Errorf("%w: unknown op %d", ErrBadCommand, cmd.Op)
	}
	q.trimTimers()
	return res
}

// trimTimers drops entries at the top of the timer heap that can no
// longer do anything (their message was acked, or moved on to another
// state), so NextDue names a time when a tick really changes something.
// A TTL entry stays while its message lives: it may be ready again by then.
func (q *Queue) trimTimers() {
	for len(q.timers) > 0 {
		e := q.timers[0]
		m := q.msgs[e.seq]
		stale := m == nil ||
			(e.kind == timerVisibility && (m.gen != e.gen || m.State != InFlight)) ||
			(e.kind == timerDelay && (m.gen != e.gen || m.State != Delayed))
		if !stale {
			return
		}
		heap.Pop(&q.timers)
	}
}

// advance moves the clock to now (never back) and lets every deadline,
// delay and TTL due by then take effect.
func (q *Queue) advance(now int64, res *Result) {
	if now > q.now {
		q.now = now
	}
	now = q.now
	for len(q.timers) > 0 && q.timers[0].at <= now {
		e := heap.Pop(&q.timers).(entry)
		m := q.msgs[e.seq]
		if m == nil {
			continue
		}
		switch e.kind {
		case timerTTL:
			if (m.State == Ready || m.State == Delayed) && q.pastTTL(m) {
				q.expire(m, res)
			}
		case timerVisibility:
			if m.gen != e.gen || m.State != InFlight {
				continue
			}
			q.counts.Timeouts++
			reason := fmt.Sprintf("its visibility timeout ran out after receive %d", m.ReceiveCount)
			res.Changes = append(res.Changes, Change{Kind: ChTimedOut, Seq: m.Seq, MsgID: m.MsgID, Consumer: m.Consumer, ReceiveCount: m.ReceiveCount})
			q.giveBack(m, 0, reason, res)
		case timerDelay:
			if m.gen != e.gen || m.State != Delayed {
				continue
			}
			if q.pastTTL(m) {
				q.expire(m, res)
				continue
			}
			q.setReady(m)
		}
	}
}

// giveBack returns a message its consumer did not ack: to the dead-letter
// queue once it has used up its receives, dropped if it outlived its TTL,
// else ready (after delay).
func (q *Queue) giveBack(m *Message, delay time.Duration, reason string, res *Result) {
	if q.cfg.MaxReceives > 0 && q.cfg.DLQ != "" && m.ReceiveCount >= q.cfg.MaxReceives {
		if m.LastError == "" {
			m.LastError = reason
		}
		q.setMoving(m, q.cfg.DLQ, DeadLetter)
		res.Changes = append(res.Changes, Change{Kind: ChDeadLettering, Seq: m.Seq, MsgID: m.MsgID, ReceiveCount: m.ReceiveCount, Queue: q.cfg.DLQ,
			Reason: fmt.Sprintf("received %d times (max-receives %d): %s", m.ReceiveCount, q.cfg.MaxReceives, m.LastError)})
		return
	}
	if q.pastTTL(m) {
		q.expire(m, res)
		return
	}
	if delay > 0 {
		q.setDelayed(m, q.now+int64(delay))
		return
	}
	q.setReady(m)
}

func (q *Queue) pastTTL(m *Message) bool {
	return q.cfg.TTL > 0 && q.now-m.EnqueuedAt >= int64(q.cfg.TTL)
}

func (q *Queue) expire(m *Message, res *Result) {
	q.counts.Expired++
	res.Changes = append(res.Changes, Change{Kind: ChExpired, Seq: m.Seq, MsgID: m.MsgID, ReceiveCount: m.ReceiveCount,
		Reason: fmt.Sprintf("older than the queue's ttl %v", time.Duration(q.cfg.TTL))})
	q.remove(m)
}

func (q *Queue) send(cmd Command, res *Result) {
	if len(cmd.Messages) == 0 || len(cmd.Messages) > MaxBatch {
		res.Err = fmt.Errorf("%w: a send carries 1 to %d messages, not %d", ErrBadCommand, MaxBatch, len(cmd.Messages))
		return
	}
	res.Sent = make([]SendOutcome, len(cmd.Messages))
	for i, nm := range cmd.Messages {
		if nm.Delay < 0 || nm.Delay > MaxVisibility {
			res.Sent[i].Err = fmt.Errorf("%w: delay %v is outside 0 to %v", ErrBadCommand, nm.Delay, MaxVisibility)
			continue
		}
		if q.cfg.MaxLength > 0 && q.counts.Held() >= q.cfg.MaxLength {
			q.counts.Rejected++
			res.Sent[i].Err = fmt.Errorf("%w: %s holds %d messages, its max length; try again shortly", ErrFull, q.cfg.Name, q.counts.Held())
			res.Changes = append(res.Changes, Change{Kind: ChRejected, MsgID: nm.MsgID})
			continue
		}
		m := &Message{MsgID: nm.MsgID, Body: nm.Body, Attributes: nm.Attributes, SentAt: q.now}
		q.insert(m)
		q.counts.Sent++
		res.Sent[i].Seq = m.Seq
		ch := Change{Kind: ChSent, Seq: m.Seq, MsgID: m.MsgID}
		if nm.Delay > 0 {
			q.setDelayed(m, q.now+int64(nm.Delay))
			ch.Due = m.Due
		} else {
			q.setReady(m)
		}
		res.Changes = append(res.Changes, ch)
	}
}

// insert gives m the next sequence number and a TTL timer; its state is
// for the caller to set.
func (q *Queue) insert(m *Message) {
	m.Seq = q.nextSeq
	q.nextSeq++
	m.EnqueuedAt = q.now
	q.msgs[m.Seq] = m
	q.order = append(q.order, m.Seq)
	if q.cfg.TTL > 0 {
		heap.Push(&q.timers, entry{at: m.EnqueuedAt + int64(q.cfg.TTL), seq: m.Seq, kind: timerTTL})
	}
}

func (q *Queue) receive(cmd Command, res *Result) {
	if cmd.Max < 1 || cmd.Max > MaxBatch {
		res.Err = fmt.Errorf("%w: a receive asks for 1 to %d messages, not %d", ErrBadCommand, MaxBatch, cmd.Max)
		return
	}
	if cmd.Visibility < 0 || cmd.Visibility > MaxVisibility || cmd.Limit < 0 {
		res.Err = fmt.Errorf("%w: visibility %v, limit %d", ErrBadCommand, cmd.Visibility, cmd.Limit)
		return
	}
	vis := cmd.Visibility
	if vis == 0 {
		vis = q.cfg.Visibility
	}
	n := cmd.Max
	if cmd.Limit > 0 {
		n = min(n, cmd.Limit-q.inflightBy[cmd.Consumer])
	}
	for len(res.Delivered) < n {
		m := q.popReady()
		if m == nil {
			break
		}
		if q.pastTTL(m) {
			q.expire(m, res)
			continue
		}
		m.ReceiveCount++
		q.setInFlight(m, cmd.Consumer, q.now+int64(vis))
		q.counts.Deliveries++
		if m.ReceiveCount > 1 {
			q.counts.Redeliveries++
		}
		res.Delivered = append(res.Delivered, Delivery{
			Seq: m.Seq, MsgID: m.MsgID, Body: m.Body, Attributes: m.Attributes,
			Receipt: m.Receipt(), ReceiveCount: m.ReceiveCount, SentAt: m.SentAt, EnqueuedAt: m.EnqueuedAt,
			ReceivedAt: q.now, Deadline: m.Due, LastError: m.LastError, Source: m.Source, Redrives: m.Redrives,
		})
		res.Changes = append(res.Changes, Change{Kind: ChDelivered, Seq: m.Seq, MsgID: m.MsgID, Consumer: m.Consumer, ReceiveCount: m.ReceiveCount, Due: m.Due})
	}
}

// settle runs an ack, nack, visibility change or dead-letter for each
// receipt, each with its own answer.
func (q *Queue) settle(cmd Command, res *Result) {
	if len(cmd.Receipts) == 0 || len(cmd.Receipts) > MaxBatch {
		res.Err = fmt.Errorf("%w: %s carries 1 to %d receipts, not %d", ErrBadCommand, cmd.Op, MaxBatch, len(cmd.Receipts))
		return
	}
	switch {
	case cmd.Op == OpNack && (cmd.Delay < 0 || cmd.Delay > MaxVisibility):
		res.Err = fmt.Errorf("%w: nack delay %v is outside 0 to %v", ErrBadCommand, cmd.Delay, MaxVisibility)
		return
	case cmd.Op == OpChangeVisibility && (cmd.Visibility < 0 || cmd.Visibility > MaxVisibility):
		res.Err = fmt.Errorf("%w: visibility %v is outside 0 to %v", ErrBadCommand, cmd.Visibility, MaxVisibility)
		return
	case cmd.Op == OpDeadLetter && q.cfg.DLQ == "":
		res.Err = fmt.Errorf("%w: queue %s has no dead-letter queue to move messages to", ErrNoDLQ, q.cfg.Name)
		return
	}
	res.Errs = make([]error, len(cmd.Receipts))
	for i, r := range cmd.Receipts {
		res.Errs[i] = q.settleOne(cmd, r, res)
	}
	if cmd.Op == OpChangeVisibility && cmd.Visibility == 0 {
		q.advance(q.now, res) // a zero timeout gives the messages back now
	}
}

func (q *Queue) settleOne(cmd Command, receipt string, res *Result) error {
	seq, count, err := ParseReceipt(receipt)
	if err != nil {
		return err
	}
	m := q.msgs[seq]
	if m == nil {
		if cmd.Op == OpAck && q.acks.has(receipt) {
			return nil // a repeat of an ack that worked: its reply was lost
		}
		if seq >= q.nextSeq {
			return fmt.Errorf("%w %s: queue %s never held a message %d", ErrUnknownReceipt, receipt, q.cfg.Name, seq)
		}
		return fmt.Errorf("%w %s: message %d is no longer in queue %s (acked, expired or moved to another queue)", ErrUnknownReceipt, receipt, seq, q.cfg.Name)
	}
	if count > m.ReceiveCount {
		return fmt.Errorf("%w %s: message %d has been received only %d times", ErrUnknownReceipt, receipt, seq, m.ReceiveCount)
	}
	if count < m.ReceiveCount {
		return fmt.Errorf("%w %s: message %d was received again (receive %d) after this delivery's visibility timeout ran out; only its latest receiver can settle it", ErrStaleReceipt, receipt, seq, m.ReceiveCount)
	}
	switch {
	case m.State == Moving:
		return fmt.Errorf("%w %s: message %d is moving to queue %s (%s)", ErrStaleReceipt, receipt, seq, m.MoveTo, m.MoveKind)
	case m.State != InFlight && cmd.Op != OpAck:
		// An ack still deletes a message whose timeout ran out as long as
		// nobody received it since (as SQS does); the rest need it in flight.
		return fmt.Errorf("%w %s: message %d is no longer in flight: its visibility timeout ran out and it is back in the queue", ErrStaleReceipt, receipt, seq)
	}
	switch cmd.Op {
	case OpAck:
		q.counts.Acked++
		q.acks.add(receipt, struct{}{})
		res.Changes = append(res.Changes, Change{Kind: ChAcked, Seq: m.Seq, MsgID: m.MsgID, Consumer: m.Consumer, ReceiveCount: m.ReceiveCount})
		q.remove(m)
	case OpNack:
		q.counts.Nacks++
		if cmd.Reason != "" {
			m.LastError = cmd.Reason
		}
		ch := Change{Kind: ChNacked, Seq: m.Seq, MsgID: m.MsgID, Consumer: m.Consumer, ReceiveCount: m.ReceiveCount, Reason: cmd.Reason}
		if cmd.Delay > 0 {
			ch.Due = q.now + int64(cmd.Delay)
		}
		res.Changes = append(res.Changes, ch)
		q.giveBack(m, cmd.Delay, "nacked", res)
	case OpChangeVisibility:
		m.Due = q.now + int64(cmd.Visibility)
		q.setInFlight(m, m.Consumer, m.Due)
		res.Changes = append(res.Changes, Change{Kind: ChVisibility, Seq: m.Seq, MsgID: m.MsgID, Consumer: m.Consumer, ReceiveCount: m.ReceiveCount, Due: m.Due})
	case OpDeadLetter:
		m.LastError = cmd.Reason
		if m.LastError == "" {
			m.LastError = "dead-lettered by " + m.Consumer
		}
		q.setMoving(m, q.cfg.DLQ, DeadLetter)
		res.Changes = append(res.Changes, Change{Kind: ChDeadLettering, Seq: m.Seq, MsgID: m.MsgID, Consumer: m.Consumer, ReceiveCount: m.ReceiveCount,
			Queue: q.cfg.DLQ, Reason: "a consumer gave up on it: " + m.LastError})
	}
	return nil
}

// transferIn takes a message from another queue, once per transfer id.
func (q *Queue) transferIn(cmd Command, res *Result) {
	if cmd.TransferID == "" || (cmd.Kind != DeadLetter && cmd.Kind != Redrive) {
		res.Err = fmt.Errorf("%w: transfer %q of kind %v", ErrBadCommand, cmd.TransferID, cmd.Kind)
		return
	}
	if seq, ok := q.transfers.get(cmd.TransferID); ok {
		res.Seq, res.Duplicate = seq, true
		return
	}
	t := cmd.Transfer
	m := &Message{MsgID: t.MsgID, Body: t.Body, Attributes: t.Attributes, SentAt: t.SentAt, LastError: t.LastError, Redrives: t.Redrives}
	if cmd.Kind == DeadLetter {
		m.ReceiveCount, m.Source = t.ReceiveCount, t.Source // kept for whoever inspects the dead letter
	} else {
		m.Redrives++ // a redriven message starts its receives afresh
	}
	q.insert(m)
	q.setReady(m)
	q.counts.MovedIn++
	q.transfers.add(cmd.TransferID, m.Seq)
	res.Seq = m.Seq
	res.Changes = append(res.Changes, Change{Kind: ChArrived, Seq: m.Seq, MsgID: m.MsgID, ReceiveCount: m.ReceiveCount, Queue: t.Source, Move: cmd.Kind, Reason: m.LastError})
}

// moved drops a message its destination has confirmed. A repeat (two
// leaders both recorded it) finds nothing and changes nothing.
func (q *Queue) moved(cmd Command, res *Result) {
	m := q.msgs[cmd.Seq]
	if m == nil || m.State != Moving || TransferID(q.cfg.Name, m.Seq) != cmd.TransferID {
		return
	}
	ch := Change{Seq: m.Seq, MsgID: m.MsgID, ReceiveCount: m.ReceiveCount, Queue: m.MoveTo, Reason: m.LastError}
	if m.MoveKind == DeadLetter {
		q.counts.DeadLettered++
		ch.Kind = ChDeadLettered
	} else {
		q.counts.Redriven++
		ch.Kind = ChRedriven
	}
	res.Changes = append(res.Changes, ch)
	q.remove(m)
}

// redrive marks ready and delayed messages to move back, oldest first.
// Messages without a source stay unless To names a destination.
func (q *Queue) redrive(cmd Command, res *Result) {
	if cmd.Max < 0 || cmd.To == q.cfg.Name {
		res.Err = fmt.Errorf("%w: redrive %s to %q, max %d", ErrBadCommand, q.cfg.Name, cmd.To, cmd.Max)
		return
	}
	for _, seq := range q.order[q.head:] {
		if cmd.Max > 0 && res.Redriving >= cmd.Max {
			break
		}
		m := q.msgs[seq]
		if m == nil || (m.State != Ready && m.State != Delayed) {
			continue
		}
		to := cmd.To
		if to == "" {
			to = m.Source
		}
		if to == "" || to == q.cfg.Name {
			continue
		}
		q.setMoving(m, to, Redrive)
		res.Redriving++
		res.Changes = append(res.Changes, Change{Kind: ChRedriving, Seq: m.Seq, MsgID: m.MsgID, ReceiveCount: m.ReceiveCount, Queue: to})
	}
}

// State transitions. Each bumps the message's generation so that heap
// entries for its previous state are recognised as stale.

func (q *Queue) leave(m *Message) {
	switch m.State {
	case Ready:
		q.counts.Ready--
	case InFlight:
		q.counts.InFlight--
		if q.inflightBy[m.Consumer]--; q.inflightBy[m.Consumer] <= 0 {
			delete(q.inflightBy, m.Consumer)
		}
	case Delayed:
		q.counts.Delayed--
	case Moving:
		q.counts.Moving--
	}
	m.gen++
}

func (q *Queue) setReady(m *Message) {
	q.leave(m)
	m.State, m.Due = Ready, 0
	q.counts.Ready++
	heap.Push(&q.ready, entry{at: int64(m.Seq), seq: m.Seq, gen: m.gen})
}

func (q *Queue) setDelayed(m *Message, until int64) {
	q.leave(m)
	m.State, m.Due = Delayed, until
	q.counts.Delayed++
	heap.Push(&q.timers, entry{at: until, seq: m.Seq, gen: m.gen, kind: timerDelay})
}

func (q *Queue) setInFlight(m *Message, consumer string, deadline int64) {
	q.leave(m)
	m.State, m.Due, m.Consumer = InFlight, deadline, consumer
	q.counts.InFlight++
	q.inflightBy[consumer]++
	heap.Push(&q.timers, entry{at: deadline, seq: m.Seq, gen: m.gen, kind: timerVisibility})
}

func (q *Queue) setMoving(m *Message, to string, kind MoveKind) {
	q.leave(m)
	m.State, m.Due, m.MoveTo, m.MoveKind = Moving, 0, to, kind
	q.counts.Moving++
}

func (q *Queue) remove(m *Message) {
	q.leave(m)
	delete(q.msgs, m.Seq)
	for q.head < len(q.order) && q.msgs[q.order[q.head]] == nil {
		q.head++
	}
	if q.head > 64 && q.head > len(q.order)/2 {
		q.order = append([]uint64(nil), q.order[q.head:]...)
		q.head = 0
	}
	if n := len(q.order) - q.head; n > 256 && n > 4*len(q.msgs) {
		live := make([]uint64, 0, 2*len(q.msgs))
		for _, s := range q.order[q.head:] {
			if q.msgs[s] != nil {
				live = append(live, s)
			}
		}
		q.order, q.head = live, 0
	}
}

// popReady takes the oldest ready message off the ready heap.
func (q *Queue) popReady() *Message {
	for len(q.ready) > 0 {
		e := heap.Pop(&q.ready).(entry)
		if m := q.msgs[e.seq]; m != nil && m.gen == e.gen && m.State == Ready {
			return m
		}
	}
	return nil
}

// Reading without changing anything.

// Get returns a copy of message seq.
func (q *Queue) Get(seq uint64) (Message, bool) {
	m := q.msgs[seq]
	if m == nil {
		return Message{}, false
	}
	return copyMessage(m), true
}

func copyMessage(m *Message) Message {
	c := *m
	c.Body = append([]byte(nil), m.Body...)
	c.Attributes = maps.Clone(m.Attributes)
	return c
}

// Window returns copies of the n oldest messages held, in arrival order.
func (q *Queue) Window(n int) []Message {
	var out []Message
	for _, seq := range q.order[q.head:] {
		if len(out) >= n {
			break
		}
		if m := q.msgs[seq]; m != nil {
			out = append(out, copyMessage(m))
		}
	}
	return out
}

// OldestAge is how long the oldest message held has been in the queue at
// time now (0 when empty): the signal to add consumers on.
func (q *Queue) OldestAge(now int64) time.Duration {
	if q.head >= len(q.order) {
		return 0
	}
	m := q.msgs[q.order[q.head]]
	if m == nil || now < m.EnqueuedAt {
		return 0
	}
	return time.Duration(now - m.EnqueuedAt)
}

// NextDue is the earliest time a deadline, delay or TTL may take effect,
// so a leader knows when a tick would change something. (It is early only
// for a TTL that falls while its message is in flight.)
func (q *Queue) NextDue() (int64, bool) {
	if len(q.timers) == 0 {
		return 0, false
	}
	return q.timers[0].at, true
}

// CanDeliver reports whether a receive by consumer at time now would
// likely hand out a message, so that a long poll proposes only then.
func (q *Queue) CanDeliver(now int64, consumer string, limit int) bool {
	due := len(q.timers) > 0 && q.timers[0].at <= now
	if limit > 0 && q.inflightBy[consumer] >= limit && !due {
		return false
	}
	return q.counts.Ready > 0 || due
}

// InFlightBy is how many messages consumer holds in flight.
func (q *Queue) InFlightBy(consumer string) int { return q.inflightBy[consumer] }

// Outgoing is a message to hand to another queue.
type Outgoing struct {
	Seq        uint64
	TransferID string
	To         string
	Kind       MoveKind
	Transfer   Transfer
}

// Outbox lists the messages moving out, oldest first.
func (q *Queue) Outbox() []Outgoing {
	if q.counts.Moving == 0 {
		return nil
	}
	var out []Outgoing
	for _, seq := range q.order[q.head:] {
		m := q.msgs[seq]
		if m == nil || m.State != Moving {
			continue
		}
		c := copyMessage(m)
		out = append(out, Outgoing{Seq: seq, TransferID: TransferID(q.cfg.Name, seq), To: m.MoveTo, Kind: m.MoveKind, Transfer: Transfer{
			MsgID: c.MsgID, Body: c.Body, Attributes: c.Attributes, SentAt: c.SentAt, ReceiveCount: c.ReceiveCount,
			LastError: c.LastError, Source: q.cfg.Name, Redrives: c.Redrives,
		}})
		if len(out) == q.counts.Moving {
			break
		}
	}
	return out
}

// Heaps with lazy deletion: entries are checked against the message when
// they come off the top.

const (
	timerVisibility uint8 = iota + 1
	timerDelay
	timerTTL
)

type entry struct {
	at   int64
	seq  uint64
	gen  uint32
	kind uint8
}

type entryHeap []entry

func (h entryHeap) Len() int { return len(h) }
func (h entryHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if a.seq != b.seq {
		return a.seq < b.seq
	}
	if a.kind != b.kind {
		return a.kind < b.kind // a total order: every replica pops ties alike
	}
	return a.gen < b.gen
}
func (h entryHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *entryHeap) Push(x any)   { *h = append(*h, x.(entry)) }
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// recentSet remembers the last n keys added, first in first out.
type recentSet[V any] struct {
	n    int
	m    map[string]V
	fifo []string
	head int
}

func newRecentSet[V any](n int) recentSet[V] { return recentSet[V]{n: n, m: map[string]V{}} }

func (s *recentSet[V]) add(k string, v V) {
	if _, ok := s.m[k]; ok {
		s.m[k] = v
		return
	}
	s.m[k] = v
	s.fifo = append(s.fifo, k)
	if len(s.fifo)-s.head > s.n {
		delete(s.m, s.fifo[s.head])
		s.fifo[s.head] = ""
		s.head++
		if s.head > s.n {
			s.fifo = append([]string(nil), s.fifo[s.head:]...)
			s.head = 0
		}
	}
}

func (s *recentSet[V]) get(k string) (V, bool) {
	v, ok := s.m[k]
	return v, ok
}

func (s *recentSet[V]) has(k string) bool {
	_, ok := s.m[k]
	return ok
}

func (s *recentSet[V]) keys() []string { return append([]string(nil), s.fifo[s.head:]...) }
