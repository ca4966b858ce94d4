package queue

// Moving messages to another queue (dead-lettering, redrive) as an
// outbox: marking them moving, listing them for the broker to hand over,
// taking one in once per transfer id, and dropping it once the destination
// holds it.

import "fmt"

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
