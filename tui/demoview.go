package tui

// The demo's state as the screen draws it: nodes, partitions with every
// replica's log, the group, the queue, the tables, the checker and the
// chart.

import (
	"math/rand"
	"time"
)

// View copies the demo's state into a ViewState.
func (d *DemoSource) View() ViewState {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := ViewState{Time: d.now, Clock: Clock{Speed: d.speed, Paused: d.paused}, Timing: "classroom"}
	for i, n := range d.nodes {
		nv := Node{ID: n.id, Up: n.up, Isolated: n.isolated}
		if n.up {
			for _, p := range d.parts {
				for _, r := range p.reps {
					if r.node == i && r.role == "leader" {
						nv.Leads = append(nv.Leads, p.name)
					}
				}
			}
			if i == 1 {
				nv.Leads = append(nv.Leads, "receipts")
			}
		}
		v.Nodes = append(v.Nodes, nv)
	}
	for _, p := range d.parts {
		pv := Partition{Name: p.name}
		var top uint64
		for _, r := range p.reps {
			if d.nodes[r.node].up {
				top = max(top, r.epoch)
			}
		}
		pv.Epoch = top
		if l := d.leader(p); l != nil {
			pv.Leader, pv.Epoch = d.nodes[l.node].id, l.epoch
		}
		for _, r := range p.reps {
			rv := Replica{Node: d.nodes[r.node].id, Role: r.role, Epoch: r.epoch, LogStart: p.logStart,
				HWM: r.hwm, LEO: r.leo()}
			if r.trunc != nil {
				t := *r.trunc
				t.Epochs = append([]uint64(nil), t.Epochs...)
				rv.Truncation = &t
			}
			from := max(0, len(r.log)-demoWindow)
			for i, e := range r.log[from:] {
				off := r.base + int64(from+i)
				rv.Entries = append(rv.Entries, Entry{Offset: off, Epoch: e.epoch, Key: e.key, Committed: off < r.hwm})
			}
			pv.Replicas = append(pv.Replicas, rv)
		}
		v.Partitions = append(v.Partitions, pv)
	}
	g := d.group
	g.Members = append([]Member(nil), g.Members...)
	g.Lag, g.LagSeconds = 0, 0
	for i, p := range d.parts {
		var hwm int64
		if l := d.leader(p); l != nil {
			hwm = l.hwm
		} else {
			hwm = p.reps[0].hwm
		}
		lag := max(0, hwm-d.committed[i])
		secs := float64(lag) * demoProduce.Seconds() * float64(len(d.parts))
		g.Offsets = append(g.Offsets, GroupOffset{Partition: p.name, Committed: d.committed[i], HWM: hwm, Lag: lag, LagSeconds: secs})
		g.Lag += lag
		g.LagSeconds = max(g.LagSeconds, secs)
	}
	v.Groups = []Group{g}
	q := d.queue
	q.Messages = append([]QueueMessage(nil), q.Messages...)
	v.Queues = []Queue{q}
	v.Tables = []Table{
		{Name: "orders.outbox", Columns: []string{"id", "order_id", "status", "created"}, Rows: copyRows(d.outbox), Total: d.outboxTotal},
		{Name: "wallet.processed_messages", Columns: []string{"message_id", "processed_at"}, Rows: copyRows(d.processed), Total: 40 + len(d.processed)},
	}
	v.Timeline = append([]TimelineLine(nil), d.tl...)
	v.Checker = Checker{At: d.checkedAt, Fields: []CheckField{
		{Name: "confirmed", Value: d.produced, OK: true},
		{Name: "lost", Value: d.lost, OK: d.lost == 0, Note: lostNote(d.lost)},
		{Name: "unknown", Value: 0, OK: true},
		{Name: "duplicate_deliveries", Value: 0, OK: true},
		{Name: "duplicate_effects", Value: 0, OK: true},
		{Name: "order_violations", Value: 0, OK: true},
		{Name: "dead_lettered", Value: int64(d.queue.DLQDepth), OK: true},
	}}
	v.Charts = Charts{
		Series: []Series{
			{Name: "lag(billing)", Unit: "msgs", Every: time.Second, Values: append([]float64(nil), d.lag...)},
			{Name: "depth(receipts)", Unit: "msgs", Every: time.Second, Values: append([]float64(nil), d.backlog...)},
		},
		Retries: demoRetries(),
	}
	v.Lesson = d.lesson(&v)
	return v
}

func lostNote(n int64) string {
	if n == 0 {
		return ""
	}
	return "acks=1 writes cut by a truncation"
}

func copyRows(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = append([]string(nil), r...)
	}
	return out
}

// demoRetries are 40 clients retrying the same failure with exponential
// backoff (base 1 s, 5 attempts): without jitter they retry together, in
// waves; with full jitter they spread out.
func demoRetries() []RetrySpread {
	rnd := rand.New(rand.NewSource(7))
	var plain, full []time.Duration
	for c := 0; c < 40; c++ {
		var tp, tf time.Duration
		for a := 0; a < 5; a++ {
			b := time.Second << a
			tp += b
			tf += time.Duration(rnd.Int63n(int64(b)))
			plain = append(plain, tp)
			full = append(full, tf)
		}
	}
	return []RetrySpread{{Name: "backoff, no jitter", Times: plain}, {Name: "backoff, full jitter", Times: full}}
}
