package kafkawire

import (
	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/partlog"
)

// What the nodes saw their Kafka clients do, for a checker: each produce
// with its fate, and each record fetched by a client that is a member of
// a group.

// Fate is what a producing client learned about its records.
type Fate int

const (
	// Acked: the answer reached the client with an offset (acks 1 or all).
	Acked Fate = iota
	// SentUnconfirmed: acks=0; the client never hears back.
	SentUnconfirmed
	// Refused: the node answered with an error; nothing was written.
	Refused
	// Unknown: the answer was lost or the write's outcome is unknown; it
	// may be in the log.
	Unknown
)

// ObservedRecord is one record a client produced or fetched.
type ObservedRecord struct {
	MsgID     string
	Key       []byte
	Offset    int64 // -1 when not known
	Tombstone bool  // a null value: a compacted topic's delete of the key
}

// Produced is one partition's produce from a client.
type Produced struct {
	Client    string
	Partition broker.TopicPartition
	Fate      Fate
	Records   []ObservedRecord
}

// Fetched is records sent to a group's member in a fetch response: sent,
// not delivered, for a client may drop what it fetched (after a leader
// change or a rebalance) and fetch it again.
type Fetched struct {
	Client string // the client.id
	Conn   string // the connection: "n2 from 127.0.0.1:50412"
	// Group is the group the fetch is for; "" when Groups names several
	// it may be for (clients sharing a client.id), see attribute.
	Group      string
	Groups     []string
	Member     string // the member id, when known
	Generation int    // the member's generation, when known (else 0)
	Partition  broker.TopicPartition
	Records    []ObservedRecord
	// Lost: the answer holding them was lost on the way (an armed fault);
	// sent, never received.
	Lost bool
}

// Committed is offsets a group accepted from a client (the next record
// to read, per partition).
type Committed struct {
	Client     string
	Conn       string
	Group      string
	Member     string // "" for a commit without a member (version 0, or an admin tool)
	Generation int    // -1 without a member
	Offsets    map[broker.TopicPartition]int64
}

// Observer hears what wire clients do; its methods are called on the
// connection's goroutine and must return quickly.
type Observer interface {
	Produced(Produced)
	Fetched(Fetched)
	Committed(Committed)
}

// msgID names a record a wire client produced by its partition and what
// it holds, so that a retried batch, whatever producer id and sequence it
// carries, names the same messages as the first attempt: a record in the
// log twice is then a duplicate to the checker, as it is to the client.
// The partition's log derives the same name when the record is read
// (partlog.WireMsgID): the batch is kept as the client sent it, with no
// room for a name of mqlab's own.
func msgID(tp broker.TopicPartition, key, value []byte) string {
	return partlog.WireMsgID(tp.String(), key, value)
}

// observeCommit tells the observer what offsets a group accepted.
func (r *request) observeCommit(group, member string, generation int, offsets map[broker.TopicPartition]int64) {
	if member != "" {
		r.cn.s.memberSeen(r.cn, group, member)
	}
	obs := r.cn.s.cfg.Observer
	if obs == nil {
		return
	}
	c := Committed{Client: r.client, Conn: r.cn.label, Group: group, Member: member, Generation: generation,
		Offsets: make(map[broker.TopicPartition]int64, len(offsets))}
	for tp, o := range offsets {
		c.Offsets[tp] = o
	}
	obs.Committed(c)
}
