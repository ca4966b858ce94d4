package queue

// Settling received messages by their receipt handles: ack, nack,
// visibility change and dead-letter.

import "fmt"

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

// purge drops every message the queue holds, in flight and delayed too,
// as SQS's PurgeQueue does; messages already moving to another queue go
// on. Each is counted as dropped and never delivered again.
func (q *Queue) purge(cmd Command, res *Result) {
	who := cmd.Consumer
	if who == "" {
		who = "a client"
	}
	for _, seq := range append([]uint64(nil), q.order[q.head:]...) {
		m := q.msgs[seq]
		if m == nil || m.State == Moving {
			continue
		}
		q.counts.Dropped++
		res.Changes = append(res.Changes, Change{Kind: ChDropped, Seq: m.Seq, MsgID: m.MsgID, ReceiveCount: m.ReceiveCount,
			Reason: fmt.Sprintf("purged from %s by %s", q.cfg.Name, who)})
		q.remove(m)
	}
}
