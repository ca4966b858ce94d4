package queue

// Sending messages into a queue and receiving them: a receive puts
// messages in flight until their visibility deadline.

import (
	"container/heap"
	"fmt"
)

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
		if q.cfg.MaxLength > 0 && q.counts.Held() >= q.cfg.MaxLength && q.cfg.Overflow == OverflowDropHead {
			if old := q.popReady(); old != nil {
				q.counts.Dropped++
				res.Changes = append(res.Changes, Change{Kind: ChDropped, Seq: old.Seq, MsgID: old.MsgID, ReceiveCount: old.ReceiveCount,
					Reason: fmt.Sprintf("the oldest ready message, dropped to make room: %s holds %d, its max length", q.cfg.Name, q.cfg.MaxLength)})
				q.remove(old)
			}
		}
		if q.cfg.MaxLength > 0 && q.counts.Held() >= q.cfg.MaxLength {
			q.counts.Rejected++
			res.Sent[i].Err = fmt.Errorf("%w: %s holds %d messages, its max length; try again shortly", ErrFull, q.cfg.Name, q.counts.Held())
			res.Changes = append(res.Changes, Change{Kind: ChRejected, MsgID: nm.MsgID})
			continue
		}
		if out, dup := q.repeat(nm); dup {
			res.Sent[i] = out
			continue
		}
		m := &Message{MsgID: nm.MsgID, Body: nm.Body, Attributes: nm.Attributes, SentAt: q.now}
		q.insert(m)
		q.remember(m)
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
	var passed []*Message // FIFO: messages whose group is busy
	defer func() { q.putBack(passed) }()
	var taken map[string]bool // FIFO: groups this receive hands out
	for len(res.Delivered) < n {
		m := q.popReady()
		if m == nil {
			break
		}
		if q.pastTTL(m) {
			q.expire(m, res)
			continue
		}
		if q.groupBusy(m) && !taken[m.group()] {
			passed = append(passed, m)
			continue
		}
		if q.cfg.FIFO {
			if taken == nil {
				taken = map[string]bool{}
			}
			taken[m.group()] = true
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
