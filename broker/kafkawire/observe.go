package kafkawire

import (
	"encoding/binary"
	"hash/maphash"
	"strconv"

	"github.com/mqlab/mqlab/broker"
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
	MsgID  string
	Key    []byte
	Offset int64 // -1 when not known
}

// Produced is one partition's produce from a client.
type Produced struct {
	Client    string
	Partition broker.TopicPartition
	Fate      Fate
	Records   []ObservedRecord
}

// Fetched is records a group member's connection fetched.
type Fetched struct {
	Client    string
	Group     string
	Partition broker.TopicPartition
	Records   []ObservedRecord
}

// Observer hears what wire clients do; its methods are called on the
// connection's goroutine and must return quickly.
type Observer interface {
	Produced(Produced)
	Fetched(Fetched)
}

// msgID names a record a wire client produced by who sent it and what it
// holds, so that a retried batch, whatever producer id and sequence it
// carries, names the same messages as the first attempt: a record in the
// log twice is then a duplicate to the checker, as it is to the client.
func msgID(client string, tp broker.TopicPartition, key, value []byte) string {
	var h maphash.Hash
	h.SetSeed(idSeed)
	h.WriteString(tp.Topic)
	var n [16]byte
	binary.BigEndian.PutUint64(n[:8], uint64(tp.Partition))
	binary.BigEndian.PutUint64(n[8:], uint64(len(key)))
	h.Write(n[:])
	h.Write(key)
	h.Write(value)
	var id [64]byte
	b := append(id[:0], client...)
	b = append(b, '~')
	b = strconv.AppendUint(b, h.Sum64()&0xffffffffff, 36)
	return string(b)
}

// idSeed seeds msgID's hash: names need only agree within one process.
var idSeed = maphash.MakeSeed()

// joined remembers which group a client joined, so its fetches count
// as deliveries to that group.
func (s *Server) joined(client, group string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.members[client] = group
}

func (s *Server) left(client, group string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.members[client] == group {
		delete(s.members, client)
	}
}

func (s *Server) groupOf(client string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.members[client]
}
