package checker

import (
	"fmt"
	"slices"
	"sort"
)

// What the broker can know of a wire client (one that speaks the Kafka
// protocol to the lab, written by someone else): the records it sent the
// client in fetch responses and the offsets the client's group committed.
// It cannot know what the client handed its application: a client drops
// what it fetched when a partition's leader changes or a rebalance takes
// the partition away, and fetches it again. So for wire groups:
//
//   - a record sent to the group for the first time counts as fetched;
//   - a record sent again, or one sent below an offset the group already
//     fetched, is a re-fetch, never a duplicate delivery or an order
//     violation on its own;
//   - the group's committed offsets are what it says it finished: a
//     commit past a record marks the record done, in commit order, and
//     a key's order is measured on that (a commit says nothing of the
//     order in which a client finished records of different partitions,
//     so nothing is counted as reordered);
//   - a re-fetch is a redelivery only when the commits prove it: the
//     group's commit moved back below a record it had committed past and
//     the record was fetched again, or the group committed past a record
//     and fetched it again under a later generation; a record committed
//     past twice, by two generations, with the commit moving back
//     between, is one too, whether or not the second fetch was seen.

// Fetch is a record sent to a wire client's group in a fetch response.
type Fetch struct {
	MsgID  string `json:"msg_id"`
	Client string `json:"client"` // its client.id
	Conn   string `json:"conn"`   // "n2 from 127.0.0.1:50412"
	// Group is the group the fetch was for; "" when the broker could not
	// tell, and Groups names those it may be for.
	Group      string   `json:"group"`
	Groups     []string `json:"groups,omitempty"`
	Member     string   `json:"member,omitempty"`
	Generation int      `json:"generation,omitempty"` // 0 when not known
	Topic      string   `json:"topic"`
	Partition  int      `json:"partition"`
	Offset     int64    `json:"offset"`
	Key        string   `json:"key,omitempty"`
	Seq        int      `json:"seq"` // its place among the wire clients' fetches and commits
}

// Commit is an offset a wire client's group committed and the group
// accepted: the next record the group will read.
type Commit struct {
	Client     string `json:"client"`
	Conn       string `json:"conn"`
	Group      string `json:"group"`
	Member     string `json:"member,omitempty"`
	Generation int    `json:"generation"` // -1 for a commit without a member
	Topic      string `json:"topic"`
	Partition  int    `json:"partition"`
	Offset     int64  `json:"offset"`
	Seq        int    `json:"seq"`
	// Seek: the learner moved the group's offset (the lab's seek), not a
	// client; what it moves back over is asked for again, not redelivered.
	Seek bool `json:"seek,omitempty"`
}

// wireRecord is one record of one partition as one wire group saw it.
type wireRecord struct {
	msg, key, client string
	fetches          int
	firstConn        string
	// covered: a commit past it stands, by coveredGen at offset coveredAt.
	covered    bool
	coveredGen int
	coveredAt  int64
	// reopened: the commit moved back below it after it was covered,
	// from backFrom to backTo; counted: its redelivery since was counted.
	reopened         bool
	backFrom, backTo int64
	counted          bool
	// fetchedSince: fetched since it was last covered.
	fetchedSince bool
	// replay: a seek moved the group back over it; its next fetch is one
	// the learner asked for.
	replay bool
}

// wirePartition is one wire group's view of one partition.
type wirePartition struct {
	group, topic string
	partition    int
	committed    int64 // the group's commit as it stands, -1 before one
	lowest       int64 // the lowest offset fetched, -1 before a fetch
	highest      int64 // the highest offset fetched, -1 before a fetch
	fetched      int
	recs         map[int64]*wireRecord
}

// checkWire counts the wire groups' fetches and what their commits
// prove, and returns the records their commits marked done, in commit
// order, for the order check.
func checkWire(r *Report, h History, o Observed) []Done {
	type gp struct {
		group, topic string
		partition    int
	}
	parts := map[gp]*wirePartition{}
	part := func(group, topic string, partition int) *wirePartition {
		k := gp{group, topic, partition}
		p := parts[k]
		if p == nil {
			p = &wirePartition{group: group, topic: topic, partition: partition, committed: -1, lowest: -1, highest: -1, recs: map[int64]*wireRecord{}}
			parts[k] = p
		}
		return p
	}
	logs := map[string]*wireLog{} // "orders/0" → its records
	for _, l := range o.Logs {
		wl := &wireLog{ids: map[int64]string{}, end: -1}
		for _, rec := range l.Records {
			wl.ids[rec.Offset] = rec.MsgID
			wl.end = max(wl.end, rec.Offset+1)
		}
		logs[fmt.Sprintf("%s/%d", l.Topic, l.Partition)] = wl
	}
	keys := map[string]string{}
	for _, p := range h.Produces {
		if _, ok := keys[p.MsgID]; !ok {
			keys[p.MsgID] = p.Key
		}
	}

	// Fetches and commits, in the order the broker saw them.
	type event struct {
		seq    int
		fetch  *Fetch
		commit *Commit
	}
	var events []event
	ambiguous := map[string]*Ambiguity{}
	ambiguousSeen := map[string]bool{}
	for i := range h.Fetches {
		f := &h.Fetches[i]
		if f.Group == "" {
			k := f.Client + "\x00" + fmt.Sprint(f.Groups)
			a := ambiguous[k]
			if a == nil {
				a = &Ambiguity{Client: f.Client, Groups: slices.Clone(f.Groups)}
				ambiguous[k] = a
			}
			if id := k + "\x00" + fmt.Sprintf("%s/%d@%d", f.Topic, f.Partition, f.Offset); !ambiguousSeen[id] {
				ambiguousSeen[id] = true
				a.Records++
			}
			continue
		}
		events = append(events, event{seq: f.Seq, fetch: f})
	}
	for i := range h.Commits {
		events = append(events, event{seq: h.Commits[i].Seq, commit: &h.Commits[i]})
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].seq < events[j].seq })
	for _, a := range ambiguous {
		r.Ambiguous = append(r.Ambiguous, *a)
	}
	sort.Slice(r.Ambiguous, func(i, j int) bool {
		a, b := r.Ambiguous[i], r.Ambiguous[j]
		return a.Client < b.Client || a.Client == b.Client && slices.Compare(a.Groups, b.Groups) < 0
	})

	var done []Done
	for _, e := range events {
		if f := e.fetch; f != nil {
			wireFetch(r, part(f.Group, f.Topic, f.Partition), f)
			continue
		}
		c := e.commit
		p := part(c.Group, c.Topic, c.Partition)
		done = append(done, wireCommit(r, p, c, logs[fmt.Sprintf("%s/%d", c.Topic, c.Partition)], keys)...)
	}

	var order []gp
	for k := range parts {
		order = append(order, k)
	}
	sort.Slice(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.group != b.group {
			return a.group < b.group
		}
		if a.topic != b.topic {
			return a.topic < b.topic
		}
		return a.partition < b.partition
	})
	for _, a := range r.Ambiguous {
		r.note("fetched", Finding{Client: a.Client, Offset: -1, Explained: a.Hint()})
	}
	for _, k := range order {
		p := parts[k]
		if p.fetched == 0 {
			continue
		}
		r.Fetched += p.fetched
		r.note("fetched", Finding{Group: p.group, Where: fmt.Sprintf("%s/%d", p.topic, p.partition), Offset: -1,
			Explained: fmt.Sprintf("%d records sent to the group's members, offsets %d to %d; sent, not known to be delivered", p.fetched, p.lowest, p.highest)})
	}
	return done
}

// wireFetch takes one fetched record.
func wireFetch(r *Report, p *wirePartition, f *Fetch) {
	where := fmt.Sprintf("%s/%d", p.topic, p.partition)
	rec := p.recs[f.Offset]
	if rec == nil {
		rec = &wireRecord{msg: f.MsgID, key: f.Key}
		p.recs[f.Offset] = rec
	}
	if rec.msg == "" {
		rec.msg, rec.key = f.MsgID, f.Key
	}
	rec.client = f.Client
	below := p.highest
	rec.fetches++
	rec.fetchedSince = true
	p.highest = max(p.highest, f.Offset)
	if p.lowest < 0 || f.Offset < p.lowest {
		p.lowest = f.Offset
	}
	finding := Finding{MsgID: f.MsgID, Client: f.Client, Group: f.Group, Where: where, Offset: f.Offset}
	if rec.fetches == 1 {
		rec.firstConn = f.Conn
		p.fetched++
		if f.Offset < below {
			r.Refetched++
			finding.Explained = fmt.Sprintf("first sent on %s after offset %d was: out of offset order, as a client that lost its fetch position reads; nothing says it was delivered out of order", f.Conn, below)
			r.noteRun("refetched", finding)
		}
		return
	}
	if rec.replay {
		rec.replay = false
		r.Refetched++
		finding.Explained = fmt.Sprintf("sent again on %s, asked for by a seek: a replay, not a redelivery", f.Conn)
		r.noteRun("refetched", finding)
		return
	}
	proof := ""
	switch {
	case rec.reopened && !rec.counted:
		proof = fmt.Sprintf("the group's commit moved back from %d to %d, and it was sent again on %s", rec.backFrom, rec.backTo, f.Conn)
	case rec.covered && rec.coveredGen > 0 && f.Generation > rec.coveredGen:
		proof = fmt.Sprintf("generation %d committed past it (offset %d), and generation %d fetched it again on %s", rec.coveredGen, rec.coveredAt, f.Generation, f.Conn)
	}
	if proof != "" {
		rec.counted = true
		rec.reopened = false
		rec.covered = false
		r.DuplicateDeliveries++
		finding.Explained = "delivered again: " + proof
		r.noteRun("duplicate_deliveries", finding)
		return
	}
	r.Refetched++
	finding.Explained = fmt.Sprintf("sent again on %s (%s time; first on %s) before the group committed past it: a re-fetch, not a redelivery, for a client drops what it fetched when an answer is lost, a leader changes or a rebalance moves the partition",
		f.Conn, ordinal(rec.fetches), rec.firstConn)
	r.noteRun("refetched", finding)
}

// wireLog is a partition's committed log as the check read it.
type wireLog struct {
	ids map[int64]string // offset → message id
	end int64            // past its last record; -1 when it holds none
}

// wireCommit takes one accepted commit and returns the records it marks
// done, in offset order.
func wireCommit(r *Report, p *wirePartition, c *Commit, log *wireLog, keys map[string]string) []Done {
	if log == nil {
		log = &wireLog{end: -1}
	}
	where := fmt.Sprintf("%s/%d", p.topic, p.partition)
	prev := p.committed
	p.committed = c.Offset
	if c.Seek {
		// What the seek moves back over comes again as asked; what it
		// skips is not done by the group.
		for off, rec := range p.recs {
			if off >= c.Offset && (rec.covered || rec.fetches > 0) {
				rec.covered, rec.reopened, rec.counted, rec.replay = false, false, false, rec.fetches > 0
			}
		}
		return nil
	}
	if prev >= 0 && c.Offset < prev {
		for off, rec := range p.recs {
			if off >= c.Offset && off < prev && rec.covered {
				rec.covered, rec.reopened, rec.counted = false, true, false
				rec.backFrom, rec.backTo = prev, c.Offset
				rec.fetchedSince = false
			}
		}
		return nil
	}
	from := prev
	if from < 0 {
		from = p.lowest // a group's first commit covers what it fetched
		if from < 0 {
			return nil
		}
	}
	// No record lies past the log's end: a commit beyond it covers nothing
	// more.
	end := min(c.Offset, max(log.end, p.highest+1))
	var done []Done
	for off := from; off < end; off++ {
		rec := p.recs[off]
		if rec == nil {
			id, ok := log.ids[off]
			if !ok {
				continue // deleted, or never written (a commit past the log's end)
			}
			rec = &wireRecord{msg: id, key: keys[id]}
			p.recs[off] = rec
		}
		if rec.covered {
			continue
		}
		if rec.reopened && !rec.counted && !rec.fetchedSince && rec.coveredGen > 0 && c.Generation > 0 && c.Generation != rec.coveredGen {
			rec.counted = true
			r.DuplicateDeliveries++
			r.noteRun("duplicate_deliveries", Finding{MsgID: rec.msg, Client: c.Client, Group: p.group, Where: where, Offset: off,
				Explained: fmt.Sprintf("committed past twice: by generation %d (offset %d), then, after the commit moved back to %d, by generation %d (offset %d)",
					rec.coveredGen, rec.coveredAt, rec.backTo, c.Generation, c.Offset)})
		}
		rec.covered, rec.reopened, rec.fetchedSince = true, false, false
		rec.coveredGen, rec.coveredAt = c.Generation, c.Offset
		if rec.msg != "" {
			client := rec.client
			if client == "" {
				client = c.Client
			}
			done = append(done, Done{MsgID: rec.msg, Client: client, Group: p.group, Topic: p.topic, Key: rec.key, Committed: true})
		}
	}
	return done
}

func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}
