package checker

import (
	"reflect"
	"slices"
	"testing"
)

func acked(id, topic string, partition int, offset int64) Produce {
	return Produce{MsgID: id, Client: "p", Topic: topic, Partition: partition, Offset: offset, Outcome: Acknowledged}
}

func log(topic string, partition int, start int64, ids ...string) Log {
	l := Log{Topic: topic, Partition: partition, Start: start}
	for i, id := range ids {
		l.Records = append(l.Records, Record{Offset: start + int64(i), MsgID: id})
	}
	return l
}

func TestProducesLostUnknownAndDuplicateWrites(t *testing.T) {
	h := History{Produces: []Produce{
		acked("p-1", "orders", 0, 0),
		acked("p-2", "orders", 0, 1), // acks=1, cut off with its leader
		{MsgID: "p-3", Topic: "orders", Partition: 0, Offset: -1, Outcome: Unknown},
		{MsgID: "p-4", Topic: "orders", Partition: 1, Offset: -1, Outcome: Sent}, // acks=0: never confirmed
		{MsgID: "p-5", Topic: "orders", Partition: 1, Offset: -1, Outcome: Failed},
		acked("p-6", "orders", 1, 0), // a lost reply: written twice
		{MsgID: "p-7", Topic: "orders", Partition: 1, Offset: -1, Outcome: Pending},
	}}
	o := Observed{Logs: []Log{log("orders", 0, 0, "p-1", "p-3"), log("orders", 1, 0, "p-6", "p-6")}}
	r := Check(h, o)
	if r.Confirmed != 3 || r.Lost != 1 || r.Unknown != 1 || r.DuplicateWrites != 1 || r.Unchecked != 0 {
		t.Errorf("report %+v", r)
	}
	want := []Missing{{MsgID: "p-2", Client: "p", Where: "orders/0", Offset: 1, Explained: "acknowledged at orders/0 offset 1, not in the committed log"}}
	if !reflect.DeepEqual(r.LostMessages, want) {
		t.Errorf("lost messages %+v", r.LostMessages)
	}
}

// Retention deleting a segment is not a loss; an unreadable partition is
// neither lost nor safe.
func TestRetentionAndUnreadable(t *testing.T) {
	h := History{Produces: []Produce{acked("p-1", "orders", 0, 0), acked("p-2", "orders", 0, 1), acked("p-3", "orders", 1, 0)}}
	o := Observed{Logs: []Log{log("orders", 0, 1, "p-2")}, Unreadable: []string{"orders/1"}}
	r := Check(h, o)
	if r.Confirmed != 3 || r.Lost != 0 || r.Unchecked != 1 || !reflect.DeepEqual(r.Unreadable, []string{"orders/1"}) {
		t.Errorf("report %+v", r)
	}
}

// A record compaction removed is not lost when a newer record of its key
// was confirmed, or when it was a tombstone; the newest of a key is.
func TestCompactedRecordsAreNotLost(t *testing.T) {
	keyed := func(id string, offset int64, key string) Produce {
		p := acked(id, "accounts", 0, offset)
		p.Key = key
		return p
	}
	tomb := keyed("p-4", 3, "b")
	tomb.Tombstone = true
	h := History{Produces: []Produce{keyed("p-1", 0, "a"), keyed("p-2", 1, "b"), keyed("p-3", 2, "a"), tomb, keyed("p-5", 4, "c")}}
	l := log("accounts", 0, 0)
	l.Records = []Record{{Offset: 2, MsgID: "p-3"}}
	l.Compacted = true
	r := Check(h, Observed{Logs: []Log{l}})
	if r.Confirmed != 5 || r.Lost != 1 || r.LostMessages[0].MsgID != "p-5" || len(r.Why["compacted"]) != 3 {
		t.Errorf("report %+v", r)
	}
	// The same log, not compacted: every missing record is lost.
	l.Compacted = false
	if r := Check(h, Observed{Logs: []Log{l}}); r.Lost != 4 {
		t.Errorf("an uncompacted log: lost %d, want 4", r.Lost)
	}
}

// Deliveries beyond the first of one message to one group are duplicates,
// replays the learner asked for are not.
func TestDeliveries(t *testing.T) {
	h := History{
		Produces: []Produce{acked("p-1", "orders", 0, 0), acked("p-2", "orders", 0, 1), acked("p-3", "orders", 0, 2)},
		Deliveries: []Delivery{
			{MsgID: "p-1", Group: "billing", Key: "881"},
			{MsgID: "p-1", Group: "billing", Key: "881"},               // a redelivery after a crash
			{MsgID: "p-1", Group: "billing", Key: "881", Replay: true}, // seek: asked for
			{MsgID: "p-1", Group: "audit", Key: "881"},                 // another group: its first
			{MsgID: "p-3", Group: "billing", Key: "881"},
			{MsgID: "p-2", Group: "billing", Key: "881"},
			{MsgID: "p-2", Group: "billing", Key: "882"},
		},
	}
	r := Check(h, Observed{Logs: []Log{log("orders", 0, 0, "p-1", "p-2", "p-3")}})
	if r.DuplicateDeliveries != 2 || r.OrderViolations != 0 {
		t.Errorf("duplicate deliveries %d (want 2), order violations %d (want 0: no work finished)", r.DuplicateDeliveries, r.OrderViolations)
	}
}

// Order is measured on finished work: within a group and key, work on an
// earlier message finishing after a later one's is a violation; across
// keys it is a reordering. Repeated work is neither, and queues are
// ordered by their sends.
func TestOrderOfFinishedWork(t *testing.T) {
	h := History{
		Produces: []Produce{acked("p-1", "orders", 0, 0), acked("p-2", "orders", 1, 0), acked("p-3", "orders", 0, 1)},
		Sends:    []Send{{MsgID: "s-1", Queue: "events", Outcome: Acknowledged}, {MsgID: "s-2", Queue: "events", Outcome: Acknowledged}},
		Done: []Done{
			{MsgID: "p-2", Group: "billing", Key: "882"}, // 882 before 881: reordered, but another key
			{MsgID: "p-1", Group: "billing", Key: "881"},
			{MsgID: "p-3", Group: "billing", Key: "881"},
			{MsgID: "p-1", Group: "billing", Key: "881"}, // done again after a crash: a duplicate
			{MsgID: "p-3", Group: "audit", Key: "881"},
			{MsgID: "p-1", Group: "audit", Key: "881"}, // audit finished 881's events backwards
			{MsgID: "s-2", Group: "events", Key: "881"},
			{MsgID: "s-1", Group: "events", Key: "881"}, // the cancel finished before the order
		},
	}
	r := Check(h, Observed{Logs: []Log{log("orders", 0, 0, "p-1", "p-3"), log("orders", 1, 0, "p-2")}, Fates: map[string]Fate{"s-1": FateAcked, "s-2": FateAcked}})
	if r.OrderViolations != 2 || r.Reordered != 3 || r.DuplicateDeliveries != 0 {
		t.Errorf("order violations %d (want 2: audit and events), reordered %d (want 3: billing, audit, events)", r.OrderViolations, r.Reordered)
	}
}

// A record moved to a retry topic is neither lost nor written twice; its
// copy must be in the retry topic, is delivered there as a second chance
// and, when its work finishes there after a later record of its key, breaks
// the moving group's per-key order.
func TestMovesToARetryTopic(t *testing.T) {
	h := History{
		Produces: []Produce{acked("p-1", "orders", 0, 0), acked("p-2", "orders", 0, 1), acked("p-3", "orders", 0, 2)},
		Moves: []Move{
			{MsgID: "p-2", Client: "billing-1", Group: "billing", From: "orders/0", To: "orders-retry", Partition: 0, Offset: 0, Outcome: Acknowledged},
			{MsgID: "p-3", Client: "billing-1", Group: "billing", From: "orders/0", To: "orders-retry", Partition: 0, Offset: -1, Outcome: Failed},
		},
		Deliveries: []Delivery{
			{MsgID: "p-1", Group: "billing", Topic: "orders", Key: "881"},
			{MsgID: "p-2", Group: "billing", Topic: "orders", Key: "881"},
			{MsgID: "p-3", Group: "billing", Topic: "orders", Key: "881"},
			{MsgID: "p-2", Group: "billing", Topic: "orders-retry", Key: "881"}, // same group, its retry
		},
		Done: []Done{
			{MsgID: "p-1", Group: "billing", Topic: "orders", Key: "881"},
			{MsgID: "p-3", Group: "billing", Topic: "orders", Key: "881"},
			{MsgID: "p-2", Group: "billing-retry", Topic: "orders-retry", Key: "881"}, // paid, after shipped
		},
	}
	o := Observed{Logs: []Log{log("orders", 0, 0, "p-1", "p-2", "p-3"), log("orders-retry", 0, 0, "p-2")}}
	r := Check(h, o)
	if r.Confirmed != 3 || r.Lost != 0 || r.DuplicateWrites != 0 || r.Moved != 1 || r.DuplicateDeliveries != 0 || r.OrderViolations != 1 {
		t.Errorf("report %+v", r)
	}

	// The retry topic lost the copy: the group committed past a message
	// nobody holds any more for it.
	o = Observed{Logs: []Log{log("orders", 0, 0, "p-1", "p-2", "p-3"), log("orders-retry", 0, 0)}}
	r = Check(h, o)
	if r.Lost != 1 || r.Moved != 1 || len(r.LostMessages) != 1 || r.LostMessages[0].Where != "orders-retry/0" {
		t.Errorf("a lost copy: %+v", r)
	}
	// Moved twice (a crash between the move and the commit): one copy too many.
	o = Observed{Logs: []Log{log("orders", 0, 0, "p-1", "p-2", "p-3"), log("orders-retry", 0, 0, "p-2", "p-2")}}
	if r = Check(h, o); r.DuplicateWrites != 1 || r.Lost != 0 {
		t.Errorf("a copy written twice: %+v", r)
	}
	// An unreadable retry topic: unchecked, not lost.
	o = Observed{Logs: []Log{log("orders", 0, 0, "p-1", "p-2", "p-3")}, Unreadable: []string{"orders-retry/0"}}
	if r = Check(h, o); r.Lost != 0 || r.Unchecked != 1 {
		t.Errorf("an unreadable retry topic: %+v", r)
	}
}

func TestEffectsAndQueues(t *testing.T) {
	h := History{
		Effects: []Effect{{"wallet", "credit", "p-1"}, {"wallet", "credit", "p-1"}, {"payments", "charge", "p-1"}, {"wallet", "credit", "p-2"}},
		Sends: []Send{
			{MsgID: "s-1", Queue: "receipts", Outcome: Acknowledged},
			{MsgID: "s-2", Queue: "receipts", Outcome: Acknowledged},
			{MsgID: "s-3", Queue: "receipts", Outcome: Acknowledged},
			{MsgID: "s-4", Queue: "receipts", Outcome: Acknowledged},
			{MsgID: "s-5", Queue: "receipts", Outcome: Rejected},
			{MsgID: "s-6", Queue: "receipts", Outcome: Unknown},
			{MsgID: "s-7", Queue: "receipts", Outcome: Acknowledged},
		},
	}
	o := Observed{Fates: map[string]Fate{"s-1": FateAcked, "s-2": FateDeadLettered, "s-3": FateExpired, "s-7": FateDropped}}
	r := Check(h, o)
	want := Report{Confirmed: 5, Lost: 1, Unknown: 1, DuplicateEffects: 1, DeadLettered: 1, Expired: 1, Dropped: 1, Rejected: 1,
		LostMessages: []Missing{{MsgID: "s-4", Where: "receipts", Offset: -1, Explained: "accepted by receipts, then neither acked, in the queue, dead-lettered, expired nor dropped"}},
		Unreadable:   []string{}}
	why := r.Why
	r.Why = nil
	if !reflect.DeepEqual(r, want) {
		t.Errorf("report\n got %+v\nwant %+v", r, want)
	}
	// Each count's records can be listed: check why FIELD.
	r.Why = why
	for field, wantWhy := range map[string]string{
		"duplicate_effects": "p-1 on wallet: wallet applied a credit for it a 2nd time",
		"dead_lettered":     "s-2 on receipts: moved to the dead-letter queue",
		"expired":           "s-3 on receipts: dropped when its time to live ran out",
		"dropped":           "s-7 on receipts: dropped from the head of the full queue",
		"rejected":          "s-5 on receipts: refused by the full queue",
		"unknown":           "s-6 on receipts: the sender never learned whether the queue took it",
		"lost":              "s-4 on receipts: accepted by receipts, then neither acked, in the queue, dead-lettered, expired nor dropped",
	} {
		fs, n := r.Explain(field)
		if len(fs) != 1 || n != 1 || fs[0].String() != wantWhy {
			t.Errorf("why %s: %d records behind %d, %v; want %q", field, len(fs), n, fs, wantWhy)
		}
	}
	if fs, n := r.Explain("confirmed"); len(fs) != 0 || n != 5 {
		t.Errorf("why confirmed: %v behind %d; want no records behind 5", fs, n)
	}
}

func TestFieldsAreTheTable(t *testing.T) {
	want := []string{"confirmed", "lost", "unknown", "duplicate_deliveries", "duplicate_effects", "order_violations",
		"dead_lettered", "expired", "dropped", "rejected", "duplicate_writes", "unchecked", "moved", "reordered", "fetched", "refetched"}
	if got := Fields(); !reflect.DeepEqual(got, want) {
		t.Errorf("fields %v", got)
	}
	r := Report{Lost: 3, Rejected: 2}
	if n, ok := r.Field("lost"); !ok || n != 3 {
		t.Errorf("Field(lost) = %d, %v", n, ok)
	}
	for _, f := range Fields() {
		if _, ok := r.Field(f); !ok {
			t.Errorf("Field(%s) has no reader", f)
		}
	}
	if len(fields) != len(Fields()) {
		t.Errorf("%d fields have readers, %d are in the language", len(fields), len(Fields()))
	}
	if _, ok := r.Field("nope"); ok {
		t.Error("Field(nope) found")
	}
	if s := r.Summary(); s != "confirmed=0 lost=3 unknown=0 duplicate_deliveries=0 duplicate_effects=0 order_violations=0 dead_lettered=0 expired=0 dropped=0 rejected=2 duplicate_writes=0 unchecked=0 moved=0 reordered=0 fetched=0 refetched=0" {
		t.Errorf("summary %q", s)
	}
}

// The field table says which fields a correct system keeps at zero.
func TestAnomalyFields(t *testing.T) {
	var anomalies []string
	for _, f := range Fields() {
		if Anomaly(f) {
			anomalies = append(anomalies, f)
		}
	}
	want := []string{"lost", "unknown", "duplicate_deliveries", "duplicate_effects", "order_violations", "duplicate_writes", "unchecked"}
	if !slices.Equal(anomalies, want) {
		t.Errorf("anomalies %v, want %v", anomalies, want)
	}
	if Anomaly("no_such_field") {
		t.Error("an unknown field is an anomaly")
	}
}

// A clone shares nothing with the report it was made from.
func TestReportClone(t *testing.T) {
	r := Report{Why: map[string][]Finding{"lost": {{MsgID: "p-1"}}}, Ambiguous: []Ambiguity{{Client: "rdkafka", Groups: []string{"a", "b"}}},
		LostMessages: []Missing{{MsgID: "p-1"}}}
	c := r.Clone()
	c.Why["lost"][0].MsgID = "x"
	c.Ambiguous[0].Groups[0] = "x"
	c.LostMessages[0].MsgID = "x"
	if r.Why["lost"][0].MsgID != "p-1" || r.Ambiguous[0].Groups[0] != "a" || r.LostMessages[0].MsgID != "p-1" {
		t.Errorf("the clone shares with the report: %+v", r)
	}
}
