package queue

// FIFO queues, as SQS has them: a message group is delivered in the order
// sent, and while one of its messages is in flight no other of the group
// is handed out; a send that repeats a deduplication id seen within the
// window is dropped and answered with the original's number and id.

import "container/heap"

// The attributes by which a send names its group and its deduplication
// id. They travel with the message's other attributes, so a command's
// wire form is the same for every queue.
const (
	AttrGroup  = "mqlab.group"
	AttrDedupe = "mqlab.dedupe"
)

// DedupeWindow is how long a FIFO queue remembers a deduplication id, in
// queue time: SQS's five minutes.
const DedupeWindow int64 = 5 * 60 * 1e9

// dedupeSeen is a deduplication id a FIFO queue accepted, and when.
type dedupeSeen struct {
	ID    string `json:"id"`
	Seq   uint64 `json:"seq"`
	MsgID string `json:"msg_id"`
	At    int64  `json:"at"`
}

// dedupes remembers the ids of a window, oldest first.
type dedupes struct {
	m    map[string]dedupeSeen
	fifo []dedupeSeen
}

func (d *dedupes) prune(now int64) {
	n := 0
	for n < len(d.fifo) && d.fifo[n].At+DedupeWindow <= now {
		if cur, ok := d.m[d.fifo[n].ID]; ok && cur.At == d.fifo[n].At {
			delete(d.m, d.fifo[n].ID)
		}
		n++
	}
	d.fifo = d.fifo[n:]
}

func (d *dedupes) add(s dedupeSeen) {
	if d.m == nil {
		d.m = map[string]dedupeSeen{}
	}
	d.m[s.ID] = s
	d.fifo = append(d.fifo, s)
}

// group is the message group a message belongs to ("" for a message sent
// without one: in a FIFO queue they make one group).
func (m *Message) group() string { return m.Attributes[AttrGroup] }

// repeat reports whether a FIFO queue drops nm as a repeat, and answers
// it with the original's number and id.
func (q *Queue) repeat(nm NewMessage) (SendOutcome, bool) {
	id := nm.Attributes[AttrDedupe]
	if !q.cfg.FIFO || id == "" {
		return SendOutcome{}, false
	}
	q.dedupe.prune(q.now)
	if s, ok := q.dedupe.m[id]; ok {
		return SendOutcome{Seq: s.Seq, MsgID: s.MsgID, Duplicate: true}, true
	}
	return SendOutcome{}, false
}

// remember notes a FIFO send's deduplication id.
func (q *Queue) remember(m *Message) {
	if id := m.Attributes[AttrDedupe]; q.cfg.FIFO && id != "" {
		q.dedupe.add(dedupeSeen{ID: id, Seq: m.Seq, MsgID: m.MsgID, At: q.now})
	}
}

// groupBusy reports whether m's group has a message in flight, so that m
// must wait (FIFO queues only).
func (q *Queue) groupBusy(m *Message) bool {
	return q.cfg.FIFO && q.groupInFlight[m.group()] > 0
}

// anyGroupFree reports whether some ready message's group is free.
func (q *Queue) anyGroupFree() bool {
	for _, e := range q.ready {
		if m := q.msgs[e.seq]; m != nil && m.gen == e.gen && m.State == Ready && !q.groupBusy(m) {
			return true
		}
	}
	return false
}

// putBack returns messages a receive passed over to the ready heap.
func (q *Queue) putBack(ms []*Message) {
	for _, m := range ms {
		heap.Push(&q.ready, entry{at: int64(m.Seq), seq: m.Seq, gen: m.gen})
	}
}
