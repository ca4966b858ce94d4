// Package checker turns what a lab did (its history: every produce and
// send with its outcome, every delivery, every side effect) and what the
// broker holds afterwards (each partition's committed log, each queue
// message's fate) into the report whose fields the lab's check prints (confirmed, lost,
// unknown, duplicates, order violations, dead-lettered, expired, rejected).
//
// It is pure: no broker, no clock. The lab drains the cluster, reads the
// logs and hands them in, so the rules here are tested without raft.
package checker

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mqlab/mqlab/lab/command"
)

// Missing is a confirmed message that is not where it should be.
type Missing struct {
	MsgID     string `json:"msg_id"`
	Client    string `json:"client"`
	Where     string `json:"where"` // orders/0, or a queue
	Offset    int64  `json:"offset"`
	Explained string `json:"explained"`
}

// MaxListed bounds the messages a report lists by id.
const MaxListed = 20

// Report is the checker's verdict. The first nine fields are the lab's
// invariants, each with one fixed meaning; the rest add detail:
//
//   - DuplicateWrites: records beyond the first of one message id in the
//     committed logs (a retry written twice because the producer was not
//     idempotent). Not a delivery: nobody has read them yet.
//   - Unchecked: confirmed messages on partitions or queues the drain could
//     not read (no leader after 30 s); neither lost nor safe.
//   - LostMessages: up to MaxListed of the lost, with where they were
//     confirmed.
//   - Moved: records a consumer gave up on and copied to a retry topic (the
//     copy acknowledged). The original stays in its partition and the copy
//     is where the move put it, so neither is lost nor a duplicate write; a
//     copy missing from the retry topic's committed log is lost.
//   - Reordered: finished work that came after the work on a message
//     produced later, within one group and any key: what a total order
//     forbids and per-key order allows.
//   - Fetched: records sent to wire clients' groups in fetch responses,
//     each counted once per group: sent, not known to be delivered.
//   - Refetched: records sent to a wire group again, or below an offset
//     it had fetched, that its commits do not prove delivered twice.
//   - Why: up to MaxListed records behind each count, by field name
//     (Explain reads it).
//   - Ambiguous: fetches by a client.id several groups' members share,
//     that the broker could not tie to one group: counted in none.
type Report struct {
	Confirmed           int `json:"confirmed"`
	Lost                int `json:"lost"`
	Unknown             int `json:"unknown"`
	DuplicateDeliveries int `json:"duplicate_deliveries"`
	DuplicateEffects    int `json:"duplicate_effects"`
	OrderViolations     int `json:"order_violations"`
	DeadLettered        int `json:"dead_lettered"`
	Expired             int `json:"expired"`
	Dropped             int `json:"dropped"` // dropped from the head of a full queue (overflow=drop-head): chosen, not lost
	Rejected            int `json:"rejected"`

	DuplicateWrites int       `json:"duplicate_writes"`
	Unchecked       int       `json:"unchecked"`
	Moved           int       `json:"moved"`
	Reordered       int       `json:"reordered"`
	Fetched         int       `json:"fetched"`
	Refetched       int       `json:"refetched"`
	LostMessages    []Missing `json:"lost_messages"`
	Unreadable      []string  `json:"unreadable"`

	Why       map[string][]Finding `json:"why,omitempty"`
	Ambiguous []Ambiguity          `json:"ambiguous,omitempty"`
}

// fields reads each of the report's numeric fields, by the name a
// condition gives it, and says whether a correct system keeps the field
// at zero (an anomaly) or it only counts what happened (a message
// dead-lettered, rejected). The names and their order are the command
// language's (command.CheckerFields): a condition reads them as words.
var fields = map[string]struct {
	get     func(Report) int
	anomaly bool
}{
	"confirmed":            {func(r Report) int { return r.Confirmed }, false},
	"lost":                 {func(r Report) int { return r.Lost }, true},
	"unknown":              {func(r Report) int { return r.Unknown }, true},
	"duplicate_deliveries": {func(r Report) int { return r.DuplicateDeliveries }, true},
	"duplicate_effects":    {func(r Report) int { return r.DuplicateEffects }, true},
	"order_violations":     {func(r Report) int { return r.OrderViolations }, true},
	"dead_lettered":        {func(r Report) int { return r.DeadLettered }, false},
	"expired":              {func(r Report) int { return r.Expired }, false},
	"dropped":              {func(r Report) int { return r.Dropped }, false},
	"rejected":             {func(r Report) int { return r.Rejected }, false},
	"duplicate_writes":     {func(r Report) int { return r.DuplicateWrites }, true},
	"unchecked":            {func(r Report) int { return r.Unchecked }, true},
	"moved":                {func(r Report) int { return r.Moved }, false},
	"reordered":            {func(r Report) int { return r.Reordered }, false},
	"fetched":              {func(r Report) int { return r.Fetched }, false},
	"refetched":            {func(r Report) int { return r.Refetched }, false},
}

// Anomaly reports whether a field counts something a correct system never
// does, so that any value but zero is a fault: lost, unknown,
// duplicate_deliveries, duplicate_effects, order_violations,
// duplicate_writes and unchecked.
func Anomaly(name string) bool {
	return fields[name].anomaly
}

// Fields returns the names of the report's numeric fields, in table order:
// the words a condition can read (expect lost == 0).
func Fields() []string { return command.CheckerFields() }

// Field reads a numeric field by name.
func (r Report) Field(name string) (int, bool) {
	f, ok := fields[name]
	if !ok {
		return 0, false
	}
	return f.get(r), true
}

// Summary is the report in one line: every numeric field, name=value.
func (r Report) Summary() string {
	s := ""
	for i, name := range Fields() {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s=%d", name, fields[name].get(r))
	}
	return s
}

// Check computes the report.
func Check(h History, o Observed) Report {
	r := Report{LostMessages: []Missing{}, Unreadable: append([]string{}, o.Unreadable...)}
	sort.Strings(r.Unreadable)
	checkProduces(&r, h.Produces, h.Moves, o)
	checkSends(&r, h.Sends, o)
	checkDeliveries(&r, h)
	h.Done = append(slices.Clip(h.Done), checkWire(&r, h, o)...)
	checkOrder(&r, h)
	checkEffects(&r, h.Effects)
	return r
}

// where is one copy of a message in a committed log.
type where struct {
	topic     string
	partition int
}

func checkProduces(r *Report, produces []Produce, moves []Move, o Observed) {
	copies := map[string][]where{} // message id → its copies in committed logs
	at := map[string][]string{}    // message id → where its copies are: "orders/0 offset 4"
	start := map[where]int64{}
	for _, l := range o.Logs {
		w := where{l.Topic, l.Partition}
		start[w] = l.Start
		for _, rec := range l.Records {
			if rec.MsgID != "" {
				copies[rec.MsgID] = append(copies[rec.MsgID], w)
				at[rec.MsgID] = append(at[rec.MsgID], fmt.Sprintf("%s/%d offset %d", l.Topic, l.Partition, rec.Offset))
			}
		}
	}
	var twice []string
	movedTo := movedTopics(moves)
	for id, cs := range copies {
		extra := len(cs) - 1
		// The first copy in each topic a move put it in is the move's.
		counted := map[string]bool{}
		for _, c := range cs {
			if movedTo[id][c.topic] && !counted[c.topic] {
				counted[c.topic] = true
				extra--
			}
		}
		r.DuplicateWrites += max(extra, 0)
		if extra > 0 {
			twice = append(twice, id)
		}
	}
	sort.Strings(twice)
	for _, id := range twice {
		r.note("duplicate_writes", Finding{MsgID: id, Offset: -1,
			Explained: fmt.Sprintf("written %d times, at %s: a retry the partition did not recognise", len(at[id]), strings.Join(at[id], ", "))})
	}
	unreadable := map[string]bool{}
	for _, u := range o.Unreadable {
		unreadable[u] = true
	}
	// present says whether a confirmed copy of id in topic at w/offset is
	// accounted for: in the log, or below its start (retention deleted its
	// segment: it was there).
	compacted := map[where]bool{}
	for _, l := range o.Logs {
		compacted[where{l.Topic, l.Partition}] = l.Compacted
	}
	type keyAt struct {
		w   where
		key string
	}
	newest := map[keyAt]int64{} // the newest confirmed offset of each key, per compacted partition
	for _, p := range produces {
		if k := (keyAt{where{p.Topic, p.Partition}, p.Key}); p.Outcome == Acknowledged && compacted[k.w] && p.Offset > newest[k] {
			newest[k] = p.Offset
		}
	}
	// compactedAway says whether a confirmed record missing from a
	// compacted log is gone by design: a newer record of its key
	// replaced it, or it is a tombstone (which a pass removes in time).
	compactedAway := func(p Produce) bool {
		k := keyAt{where{p.Topic, p.Partition}, p.Key}
		return compacted[k.w] && p.Offset >= 0 && (p.Offset < newest[k] || p.Tombstone)
	}
	present := func(id, topic string, w where, offset int64) bool {
		for _, c := range copies[id] {
			if c.topic == topic {
				return true
			}
		}
		s, ok := start[w]
		return ok && offset >= 0 && offset < s
	}
	for _, p := range produces {
		switch p.Outcome {
		case Unknown:
			r.Unknown++
			r.note("unknown", Finding{MsgID: p.MsgID, Client: p.Client, Where: fmt.Sprintf("%s/%d", p.Topic, p.Partition), Offset: -1,
				Explained: "the producer never learned whether it was written (no answer, or the leader lost its leadership)"})
			continue
		case Acknowledged:
			r.Confirmed++
		default:
			continue
		}
		w := where{p.Topic, p.Partition}
		if unreadable[fmt.Sprintf("%s/%d", p.Topic, p.Partition)] {
			r.Unchecked++
			r.note("unchecked", Finding{MsgID: p.MsgID, Client: p.Client, Where: fmt.Sprintf("%s/%d", p.Topic, p.Partition), Offset: p.Offset,
				Explained: "confirmed on a partition the check could not read"})
			continue
		}
		if present(p.MsgID, p.Topic, w, p.Offset) {
			continue
		}
		if compactedAway(p) {
			r.note("compacted", Finding{MsgID: p.MsgID, Client: p.Client, Where: fmt.Sprintf("%s/%d", p.Topic, p.Partition), Offset: p.Offset,
				Explained: fmt.Sprintf("removed by compaction: key %s has a newer record, or this was its tombstone", p.Key)})
			continue
		}
		r.lose(Missing{MsgID: p.MsgID, Client: p.Client, Where: fmt.Sprintf("%s/%d", p.Topic, p.Partition), Offset: p.Offset,
			Explained: fmt.Sprintf("acknowledged at %s/%d offset %d, not in the committed log", p.Topic, p.Partition, p.Offset)})
	}
	// A move is not a new message (its original was confirmed when it was
	// produced), but the consumer committed past the original only because
	// the retry topic confirmed the copy: a missing copy is lost.
	for _, m := range moves {
		if m.Outcome != Acknowledged {
			continue
		}
		r.Moved++
		at := fmt.Sprintf("%s/%d", m.To, m.Partition)
		r.note("moved", Finding{MsgID: m.MsgID, Client: m.Client, Group: m.Group, Where: at, Offset: m.Offset,
			Explained: fmt.Sprintf("given up on in %s and copied to %s", m.From, at)})
		if unreadable[at] {
			r.Unchecked++
			r.note("unchecked", Finding{MsgID: m.MsgID, Client: m.Client, Where: at, Offset: m.Offset, Explained: "moved to a partition the check could not read"})
			continue
		}
		if present(m.MsgID, m.To, where{m.To, m.Partition}, m.Offset) {
			continue
		}
		r.lose(Missing{MsgID: m.MsgID, Client: m.Client, Where: at, Offset: m.Offset,
			Explained: fmt.Sprintf("moved from %s to %s offset %d by %s, which committed past it; the copy is not in the committed log", m.From, at, m.Offset, m.Client)})
	}
}

// movedTopics maps a message id to the topics an acknowledged move put a
// copy of it in.
func movedTopics(moves []Move) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, m := range moves {
		if m.Outcome != Acknowledged {
			continue
		}
		if out[m.MsgID] == nil {
			out[m.MsgID] = map[string]bool{}
		}
		out[m.MsgID][m.To] = true
	}
	return out
}

func (r *Report) lose(m Missing) {
	r.Lost++
	if len(r.LostMessages) < MaxListed {
		r.LostMessages = append(r.LostMessages, m)
	}
}

func checkSends(r *Report, sends []Send, o Observed) {
	unreadable := map[string]bool{}
	for _, u := range o.Unreadable {
		unreadable[u] = true
	}
	for _, s := range sends {
		f := Finding{MsgID: s.MsgID, Client: s.Client, Where: s.Queue, Offset: -1}
		switch s.Outcome {
		case Unknown:
			r.Unknown++
			f.Explained = "the sender never learned whether the queue took it"
			r.note("unknown", f)
			continue
		case Rejected:
			r.Rejected++
			f.Explained = "refused by the full queue"
			r.note("rejected", f)
			continue
		case Acknowledged:
			r.Confirmed++
		default:
			continue
		}
		if unreadable[s.Queue] {
			r.Unchecked++
			f.Explained = "accepted by a queue the check could not read"
			r.note("unchecked", f)
			continue
		}
		switch o.Fates[s.MsgID] {
		case "":
			r.Lost++
			if len(r.LostMessages) < MaxListed {
				r.LostMessages = append(r.LostMessages, Missing{MsgID: s.MsgID, Client: s.Client, Where: s.Queue, Offset: -1,
					Explained: fmt.Sprintf("accepted by %s, then neither acked, in the queue, dead-lettered, expired nor dropped", s.Queue)})
			}
		case FateDeadLettered:
			r.DeadLettered++
			f.Explained = "moved to the dead-letter queue"
			r.note("dead_lettered", f)
		case FateExpired:
			r.Expired++
			f.Explained = "dropped when its time to live ran out"
			r.note("expired", f)
		case FateDropped:
			r.Dropped++
			f.Explained = "dropped from the head of the full queue"
			r.note("dropped", f)
		}
	}
}

// checkDeliveries counts deliveries beyond the first of one message to
// one group or queue. The delivery of a copy from the retry topic a move
// put it in is its second chance, not a duplicate.
func checkDeliveries(r *Report, h History) {
	movedTo := movedTopics(h.Moves)
	type gm struct{ group, msg, via string }
	seen := map[gm]int{}
	for _, d := range h.Deliveries {
		if d.Replay {
			continue
		}
		k := gm{d.Group, d.MsgID, ""}
		if movedTo[d.MsgID][d.Topic] {
			k.via = d.Topic
		}
		seen[k]++
		if n := seen[k]; n > 1 {
			r.DuplicateDeliveries++
			r.note("duplicate_deliveries", Finding{MsgID: d.MsgID, Client: d.Client, Group: d.Group, Where: d.Topic, Offset: -1,
				Explained: fmt.Sprintf("delivered to the group a %s time", ordinal(n))})
		}
	}
}

// checkOrder walks the finished work in the order it finished and counts,
// within one group or queue, work on a message produced (or sent) before
// one whose work had already finished: with the same key an order
// violation, with any key a reordering. Work repeated on one message is a
// duplicate, not a reordering. A copy's work in a retry topic counts in
// the flow of the group that moved it there: for the key's order it is
// that group's work, finishing late.
func checkOrder(r *Report, h History) {
	order := map[string]int{}
	for i, p := range h.Produces {
		if _, ok := order[p.MsgID]; !ok {
			order[p.MsgID] = i
		}
	}
	for i, s := range h.Sends {
		if _, ok := order[s.MsgID]; !ok {
			order[s.MsgID] = len(h.Produces) + i
		}
	}
	type mt struct{ msg, topic string }
	movedBy := map[mt]string{}
	for _, m := range h.Moves {
		k := mt{m.MsgID, m.To}
		if _, ok := movedBy[k]; !ok && m.Outcome == Acknowledged {
			movedBy[k] = m.Group
		}
	}
	type gm struct{ group, msg string }
	type gk struct{ group, key string }
	done := map[gm]bool{}
	latestKey := map[gk]int{}
	latest := map[string]int{}
	latestMsg := map[gk]string{} // the message behind latestKey (and, with key "\x00", latest)
	finished := func(d Done) string {
		if d.Committed {
			return "committed past"
		}
		return "finished"
	}
	for _, d := range h.Done {
		group := d.Group
		if g, ok := movedBy[mt{d.MsgID, d.Topic}]; ok && d.Topic != "" {
			group = g
		}
		if done[gm{group, d.MsgID}] {
			continue
		}
		done[gm{group, d.MsgID}] = true
		pos, ok := order[d.MsgID]
		if !ok {
			continue
		}
		f := Finding{MsgID: d.MsgID, Client: d.Client, Group: group, Where: d.Topic, Offset: -1}
		all := gk{group, "\x00"}
		switch last, ok := latest[group]; {
		case d.Committed:
			// One commit covers several partitions at once: it says
			// nothing of the order across them.
		case ok && pos < last:
			r.Reordered++
			f.Explained = fmt.Sprintf("%s after %s, which was written after it", finished(d), latestMsg[all])
			r.note("reordered", f)
		default:
			latest[group], latestMsg[all] = pos, d.MsgID
		}
		kk := gk{group, d.Key}
		if last, ok := latestKey[kk]; ok && pos < last {
			r.OrderViolations++
			f.Explained = fmt.Sprintf("%s after %s, which has the same key (%q) and was written after it", finished(d), latestMsg[kk], d.Key)
			r.note("order_violations", f)
			continue
		}
		latestKey[kk], latestMsg[kk] = pos, d.MsgID
	}
}

func checkEffects(r *Report, effects []Effect) {
	seen := map[Effect]int{}
	for _, e := range effects {
		seen[e]++
		if n := seen[e]; n > 1 {
			r.DuplicateEffects++
			r.note("duplicate_effects", Finding{MsgID: e.MsgID, Where: e.Service, Offset: -1,
				Explained: fmt.Sprintf("%s applied a %s for it a %s time", e.Service, e.Kind, ordinal(n))})
		}
	}
}
