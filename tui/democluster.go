package tui

// What the demo's cluster does as lab time passes: elections, the
// producer, replication with its truncations, the consumer group, the
// queue's workers, and the series the chart samples.

import (
	"fmt"
	"strconv"
	"time"
)

// advance moves the demo's lab time by dt (at most a tick).
func (d *DemoSource) advance(dt time.Duration) {
	d.now = d.now.Add(dt)
	d.elect()
	for !d.nextProd.After(d.now) {
		d.produce(d.nextProd)
		d.nextProd = d.nextProd.Add(demoProduce)
	}
	for _, p := range d.parts {
		d.replicate(p)
	}
	d.consume(dt)
	d.work(dt)
	if !d.nextSample.After(d.now) {
		d.sample()
		d.nextSample = d.nextSample.Add(time.Second)
	}
}

func (d *DemoSource) reachable(n int) bool { return d.nodes[n].up && !d.nodes[n].isolated }

// leader is the replica leading at the highest epoch that the others can
// reach; a stale leader on an isolated node does not count.
func (d *DemoSource) leader(p *demoPart) *demoReplica {
	var best *demoReplica
	for _, r := range p.reps {
		if r.role == "leader" && d.reachable(r.node) && (best == nil || r.epoch > best.epoch) {
			best = r
		}
	}
	return best
}

func (d *DemoSource) elect() {
	for _, p := range d.parts {
		if d.leader(p) != nil {
			p.electAt = time.Time{}
			continue
		}
		if p.electAt.IsZero() {
			p.electAt = d.now.Add(demoElection)
			for _, r := range p.reps {
				if d.reachable(r.node) && r.role == "follower" {
					r.role = "candidate"
				}
			}
			continue
		}
		if d.now.Before(p.electAt) {
			continue
		}
		var cands []*demoReplica
		var top uint64
		for _, r := range p.reps {
			if d.reachable(r.node) {
				cands = append(cands, r)
			}
			top = max(top, r.epoch)
		}
		if len(cands) < len(p.reps)/2+1 {
			p.electAt = d.now.Add(demoElection) // no majority: try again later
			continue
		}
		win := cands[0]
		for _, c := range cands[1:] { // the most up-to-date log wins the vote
			we, _ := win.epochAt(win.leo() - 1)
			ce, _ := c.epochAt(c.leo() - 1)
			if ce > we || (ce == we && c.leo() > win.leo()) {
				win = c
			}
		}
		epoch := top + 1
		for _, c := range cands {
			c.epoch = epoch
			c.role = "follower"
		}
		win.role = "leader"
		p.electAt = time.Time{}
		d.event(d.now, "leader-elected", fmt.Sprintf("%s leads %s at epoch %d", d.nodes[win.node].id, p.name, epoch))
	}
}

func (d *DemoSource) produce(at time.Time) {
	p := d.parts[int(d.produced)%len(d.parts)]
	d.produced++
	l := d.leader(p)
	if l == nil {
		d.event(at, "produce-failed", fmt.Sprintf("order %d to %s: no leader, the producer retries", 880+d.produced, p.name))
		return
	}
	key := fmt.Sprintf("order-%d", 880+d.produced)
	l.log = append(l.log, demoEntry{epoch: l.epoch, key: key, at: at})
	// The outbox row a service wrote with the order.
	d.outboxTotal++
	d.outbox = append(d.outbox, []string{strconv.Itoa(d.outboxTotal), key, "pending", at.Format("15:04:05.0")})
	if len(d.outbox) > 8 {
		d.outbox = d.outbox[len(d.outbox)-8:]
	}
}

// replicate brings the reachable followers in line with the leader:
// a divergent tail is cut, then older entries are copied and the
// high-water mark follows the majority.
func (d *DemoSource) replicate(p *demoPart) {
	l := d.leader(p)
	if l == nil {
		return
	}
	for _, r := range p.reps {
		if r == l || !d.reachable(r.node) {
			continue
		}
		if r.epoch > l.epoch {
			continue
		}
		if r.role == "leader" || r.role == "candidate" {
			if r.role == "leader" {
				d.event(d.now, "stepped-down", fmt.Sprintf("%s steps down on %s: epoch %d is over", d.nodes[r.node].id, p.name, r.epoch))
			}
			r.role = "follower"
		}
		r.epoch = l.epoch
		// First offset where the logs disagree.
		div := r.leo()
		for off := max(r.base, l.base); off < r.leo(); off++ {
			le, ok := l.epochAt(off)
			re, _ := r.epochAt(off)
			if !ok || le != re {
				div = off
				break
			}
		}
		if div < r.leo() {
			cut := r.log[div-r.base:]
			t := &Truncation{At: d.now, From: div, To: r.leo()}
			for _, e := range cut {
				t.Epochs = append(t.Epochs, e.epoch)
			}
			r.log = r.log[:div-r.base]
			r.trunc = t
			d.lost += int64(len(cut))
			what := fmt.Sprintf("offsets %d–%d", t.From, t.To-1)
			if t.To-t.From == 1 {
				what = fmt.Sprintf("offset %d", t.From)
			}
			d.event(d.now, "truncation", fmt.Sprintf("%s cut %s of %s (epoch %d): never committed, written by a leader that lost",
				d.nodes[r.node].id, what, p.name, t.Epochs[0]))
		}
		for r.leo() < l.leo() {
			e := l.log[r.leo()-l.base]
			if d.now.Sub(e.at) < demoReplLag {
				break
			}
			r.log = append(r.log, e)
		}
	}
	// The high-water mark: the highest offset a majority holds.
	var hwm int64 = l.hwm
	for off := l.leo(); off > l.hwm; off-- {
		n := 0
		le, _ := l.epochAt(off - 1)
		for _, r := range p.reps {
			if re, ok := r.epochAt(off - 1); ok && re == le && (r == l || d.reachable(r.node)) {
				n++
			}
		}
		if n >= len(p.reps)/2+1 {
			hwm = off
			break
		}
	}
	l.hwm = hwm
	for _, r := range p.reps {
		if r != l && d.reachable(r.node) {
			r.hwm = min(l.hwm, r.leo())
		}
	}
	// Old entries leave the window: keep the logs short.
	for _, r := range p.reps {
		if len(r.log) > 200 {
			drop := len(r.log) - 150
			r.log = append([]demoEntry(nil), r.log[drop:]...)
			r.base += int64(drop)
		}
	}
	p.logStart = l.base
}

func (d *DemoSource) consume(dt time.Duration) {
	for i, p := range d.parts {
		l := d.leader(p)
		if l == nil {
			continue
		}
		if d.rnd.Float64() < float64(dt)/float64(600*time.Millisecond) && d.committed[i] < l.hwm {
			d.committed[i] = min(l.hwm, d.committed[i]+int64(1+d.rnd.Intn(3)))
		}
	}
	for i := range d.outbox {
		if d.outbox[i][2] == "pending" && d.rnd.Float64() < 0.1 {
			d.outbox[i][2] = "sent"
		}
	}
}

func (d *DemoSource) work(dt time.Duration) {
	q := &d.queue
	if d.rnd.Float64() < float64(dt)/float64(700*time.Millisecond) {
		q.Ready++
	}
	if q.Ready > 0 && q.InFlight < 3 && d.rnd.Float64() < 0.2 {
		q.Ready--
		q.InFlight++
		id := fmt.Sprintf("rcpt-%d", 881+d.rnd.Intn(100))
		q.Messages = append(q.Messages, QueueMessage{ID: id, Value: "receipt " + id[5:], State: "in-flight",
			Worker: fmt.Sprintf("w%d", 1+d.rnd.Intn(2)), Receives: 1 + d.rnd.Intn(3), Due: q.Visibility})
	}
	kept := q.Messages[:0]
	for _, m := range q.Messages {
		m.Due -= dt
		if m.Due <= 0 {
			q.InFlight--
			if d.rnd.Float64() < 0.3 { // not acked: it comes back
				d.event(d.now, "redelivery", fmt.Sprintf("%s came back after its visibility timeout (received %d×)", m.ID, m.Receives))
				q.Ready++
			} else {
				d.processed = append(d.processed, []string{"w-" + m.ID, d.now.Format("15:04:05")})
				if len(d.processed) > 6 {
					d.processed = d.processed[len(d.processed)-6:]
				}
			}
			continue
		}
		kept = append(kept, m)
	}
	q.Messages = kept
}

func (d *DemoSource) sample() {
	var lag int64
	for i, p := range d.parts {
		if l := d.leader(p); l != nil {
			lag += l.hwm - d.committed[i]
		}
	}
	d.lag = appendCapped(d.lag, float64(lag), 240)
	d.backlog = appendCapped(d.backlog, float64(d.queue.Ready+d.queue.InFlight), 240)
}

func appendCapped(xs []float64, v float64, n int) []float64 {
	xs = append(xs, v)
	if len(xs) > n {
		xs = xs[len(xs)-n:]
	}
	return xs
}
