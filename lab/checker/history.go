package checker

// What the lab hands the checker: its clients' history, and what it read
// from the cluster after draining it.

// Outcome is what a client learned about one message it sent.
type Outcome string

// Outcomes of produces and sends.
const (
	Acknowledged Outcome = "acknowledged" // confirmed: acks=1 or all, or a queue send accepted
	Sent         Outcome = "sent"         // acks=0: sent, never confirmed
	Failed       Outcome = "failed"       // refused, or it never reached a leader
	Unknown      Outcome = "unknown"      // the client could not learn whether it was written
	Rejected     Outcome = "rejected"     // a full queue refused it (back-pressure)
	Pending      Outcome = "pending"      // still in flight
)

// outcomeRank orders what a client can learn of a message it sent, from
// least to most.
var outcomeRank = map[Outcome]int{Failed: 0, Sent: 1, Unknown: 2, Acknowledged: 3}

// Outranks says whether o tells more than p of a message's fate: a
// retry that was acknowledged outranks the attempt whose answer was lost.
func (o Outcome) Outranks(p Outcome) bool { return outcomeRank[o] > outcomeRank[p] }

// Produce is one message a producer sent to a topic.
type Produce struct {
	MsgID     string  `json:"msg_id"`
	Client    string  `json:"client"`
	Topic     string  `json:"topic"`
	Partition int     `json:"partition"` // -1 when not known
	Offset    int64   `json:"offset"`    // -1 when not known
	Key       string  `json:"key,omitempty"`
	Tombstone bool    `json:"tombstone,omitempty"` // a null value: a compacted topic's delete of the key
	Outcome   Outcome `json:"outcome"`
}

// Send is one message a client put on a queue.
type Send struct {
	MsgID   string  `json:"msg_id"`
	Client  string  `json:"client"`
	Queue   string  `json:"queue"`
	Outcome Outcome `json:"outcome"`
}

// Delivery is one message handed to a consumer (of a group) or a worker
// (of a queue). Replay marks deliveries the learner asked for again (seek,
// reset, redrive): they are not duplicates.
type Delivery struct {
	MsgID  string `json:"msg_id"`
	Client string `json:"client"`
	Group  string `json:"group"` // a consumer group, or a queue's name
	Topic  string `json:"topic,omitempty"`
	Key    string `json:"key,omitempty"`
	Replay bool   `json:"replay,omitempty"`
}

// Done is one message whose work a client finished, in the order the work
// finished: what the service behind the client saw, and so what order is
// measured on. Topic is where the client read it ("" for a queue).
type Done struct {
	MsgID  string `json:"msg_id"`
	Client string `json:"client"`
	Group  string `json:"group"` // a consumer group, or a queue's name
	Topic  string `json:"topic,omitempty"`
	Key    string `json:"key,omitempty"`
	// Committed: a wire group committed past it, which is all the broker
	// knows of a wire client's work.
	Committed bool `json:"committed,omitempty"`
}

// Move is a record a consumer gave up on and produced to a retry topic,
// with the same message id and key, before it committed past it: a log
// cannot delete one record, so the copy is how the partition moves on.
type Move struct {
	MsgID   string  `json:"msg_id"`
	Client  string  `json:"client"`
	Group   string  `json:"group"` // the group that gave up on it
	From    string  `json:"from"`  // orders/1
	To      string  `json:"to"`    // the retry topic
	Outcome Outcome `json:"outcome"`
	// Where the retry topic acknowledged the copy; -1 when not known.
	Partition int   `json:"partition"`
	Offset    int64 `json:"offset"`
}

// Effect is one side effect a service applied for a message: a charge, a
// credit, a row.
type Effect struct {
	Service string `json:"service"`
	Kind    string `json:"kind"`
	MsgID   string `json:"msg_id"`
}

// History is everything the lab's clients did, in the order they did it.
// Fetches and Commits are what wire clients' groups did (see checkWire):
// the lab's own clients' work is in Deliveries and Done.
type History struct {
	Produces   []Produce
	Sends      []Send
	Deliveries []Delivery
	Done       []Done
	Moves      []Move
	Effects    []Effect
	Fetches    []Fetch
	Commits    []Commit
}

// Record is one record of a committed log.
type Record struct {
	Offset int64
	MsgID  string
}

// Log is one partition's committed log read from its start.
type Log struct {
	Topic     string
	Partition int
	Start     int64 // the log start offset: older records were deleted by retention
	Records   []Record
	// Compacted: the topic is compacted, so a record with a newer one of
	// its key, or a tombstone, may be gone from the log by design.
	Compacted bool
}

// Fate is where a queue message is at check time.
type Fate string

// Fates of queue messages.
const (
	FateAcked        Fate = "acked"
	FateReady        Fate = "ready"
	FateInFlight     Fate = "in-flight"
	FateDelayed      Fate = "delayed"
	FateDeadLettered Fate = "dead-lettered"
	FateExpired      Fate = "expired"
	FateDropped      Fate = "dropped" // from the head of a full queue, as its overflow setting says
)

// Observed is what the lab read from the cluster after draining it.
type Observed struct {
	Logs []Log
	// Unreadable names partitions (and queues) the drain could not read:
	// their confirmed messages count as unchecked, never as lost.
	Unreadable []string
	// Fates of queue messages by message id.
	Fates map[string]Fate
}
