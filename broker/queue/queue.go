package queue

// A queue's state and Apply, which runs every command, and its clock:
// visibility deadlines, delays and TTLs take effect as commands bring the
// time forward.

import (
	"container/heap"
	"fmt"
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
	// FIFO queues: group → its messages in flight, and the deduplication
	// ids of the window.
	groupInFlight map[string]int
	dedupe        dedupes
	counts        Counts

	transfers recentSet[uint64] // transfer id → seq here
	acks      recentSet[struct{}]
}

// New returns an empty queue.
func New(cfg Config) *Queue {
	return &Queue{
		cfg:           cfg,
		nextSeq:       1,
		msgs:          map[uint64]*Message{},
		inflightBy:    map[string]int{},
		groupInFlight: map[string]int{},
		transfers:     newRecentSet[uint64](transferWindow),
		acks:          newRecentSet[struct{}](ackWindow),
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
	case OpPurge:
		q.purge(cmd, &res)
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
