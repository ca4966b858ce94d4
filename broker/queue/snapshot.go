package queue

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"slices"
)

// A queue's snapshot is JSON: a handful of counters and the messages held,
// readable when something goes wrong. The heaps are rebuilt on restore.

const snapshotVersion = 1

type snapshot struct {
	Version   int            `json:"version"`
	Config    Config         `json:"config"`
	Now       int64          `json:"now"`
	NextSeq   uint64         `json:"next_seq"`
	Counts    Counts         `json:"counts"`
	Messages  []Message      `json:"messages"`            // in arrival order
	Transfers []transferSeen `json:"transfers,omitempty"` // oldest first
	Acks      []string       `json:"acks,omitempty"`      // oldest first
	Dedupes   []dedupeSeen   `json:"dedupes,omitempty"`   // FIFO: oldest first
}

type transferSeen struct {
	ID  string `json:"id"`
	Seq uint64 `json:"seq"`
}

// MarshalBinary encodes the whole state.
func (q *Queue) MarshalBinary() ([]byte, error) {
	s := snapshot{Version: snapshotVersion, Config: q.cfg, Now: q.now, NextSeq: q.nextSeq, Counts: q.counts,
		Messages: make([]Message, 0, len(q.msgs)), Acks: q.acks.keys(), Dedupes: q.dedupe.fifo}
	for _, seq := range q.order[q.head:] {
		if m := q.msgs[seq]; m != nil {
			s.Messages = append(s.Messages, *m)
		}
	}
	for _, id := range q.transfers.keys() {
		seq, _ := q.transfers.get(id)
		s.Transfers = append(s.Transfers, transferSeen{ID: id, Seq: seq})
	}
	return json.Marshal(s)
}

// Restore rebuilds a queue from MarshalBinary's output.
func Restore(data []byte) (*Queue, error) {
	var s snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("restore queue: %w", err)
	}
	if s.Version != snapshotVersion {
		return nil, fmt.Errorf("restore queue: snapshot version %d, want %d", s.Version, snapshotVersion)
	}
	q := New(s.Config)
	q.now, q.nextSeq = s.Now, s.NextSeq
	q.counts = s.Counts
	q.counts.Ready, q.counts.InFlight, q.counts.Delayed, q.counts.Moving = 0, 0, 0, 0
	if !slices.IsSortedFunc(s.Messages, func(a, b Message) int { return cmpSeq(a.Seq, b.Seq) }) {
		return nil, fmt.Errorf("restore queue %s: messages out of order", s.Config.Name)
	}
	for i := range s.Messages {
		m := &s.Messages[i]
		if m.Seq == 0 || m.Seq >= q.nextSeq || q.msgs[m.Seq] != nil {
			return nil, fmt.Errorf("restore queue %s: bad message number %d", s.Config.Name, m.Seq)
		}
		m.gen = 0
		q.msgs[m.Seq] = m
		q.order = append(q.order, m.Seq)
		switch m.State {
		case Ready:
			q.counts.Ready++
			q.ready = append(q.ready, entry{at: int64(m.Seq), seq: m.Seq})
		case InFlight:
			q.counts.InFlight++
			q.inflightBy[m.Consumer]++
			if q.cfg.FIFO {
				q.groupInFlight[m.group()]++
			}
			q.timers = append(q.timers, entry{at: m.Due, seq: m.Seq, kind: timerVisibility})
		case Delayed:
			q.counts.Delayed++
			q.timers = append(q.timers, entry{at: m.Due, seq: m.Seq, kind: timerDelay})
		case Moving:
			q.counts.Moving++
		default:
			return nil, fmt.Errorf("restore queue %s: message %d in state %v", s.Config.Name, m.Seq, m.State)
		}
		if q.cfg.TTL > 0 && m.State != Moving {
			q.timers = append(q.timers, entry{at: m.EnqueuedAt + int64(q.cfg.TTL), seq: m.Seq, kind: timerTTL})
		}
	}
	heap.Init(&q.ready)
	heap.Init(&q.timers)
	for _, t := range s.Transfers {
		q.transfers.add(t.ID, t.Seq)
	}
	for _, a := range s.Acks {
		q.acks.add(a, struct{}{})
	}
	for _, d := range s.Dedupes {
		q.dedupe.add(d)
	}
	return q, nil
}

func cmpSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
