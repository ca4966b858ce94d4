package queue

// A message's state transitions, and the heaps that find the oldest ready
// message and the next timer. Each transition bumps the message's
// generation so that heap entries for its previous state are recognised
// as stale.

import "container/heap"

func (q *Queue) leave(m *Message) {
	switch m.State {
	case Ready:
		q.counts.Ready--
	case InFlight:
		q.counts.InFlight--
		if q.inflightBy[m.Consumer]--; q.inflightBy[m.Consumer] <= 0 {
			delete(q.inflightBy, m.Consumer)
		}
		if q.cfg.FIFO {
			if q.groupInFlight[m.group()]--; q.groupInFlight[m.group()] <= 0 {
				delete(q.groupInFlight, m.group())
			}
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
	if q.cfg.FIFO {
		q.groupInFlight[m.group()]++
	}
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
