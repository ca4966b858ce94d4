package groupcoord

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The coordinator keeps two kinds of record in __consumer_offsets, as Kafka
// does: an offset commit per group and partition, and a group's metadata
// (generation, strategy, members and their assignment) at the end of every
// rebalance. The latest record of each key wins; replaying a partition's
// log from its start rebuilds every group it coordinates.
//
// Keys are short readable text, so the lab's log view shows what each
// record is about ("offset billing orders/0", "group billing"); values are
// JSON.

// RecordKind says what a record of __consumer_offsets holds.
type RecordKind int

const (
	// OffsetCommitRecord: a group's committed offset for one partition.
	OffsetCommitRecord RecordKind = iota + 1
	// GroupMetadataRecord: a group's membership after a rebalance.
	GroupMetadataRecord
)

// Offset is a committed offset: the next offset the group will read from
// the partition, and who committed it.
type Offset struct {
	Offset     int64
	Generation int       // the committing member's generation; -1 for an admin seek
	Member     string    // the committing member; "" for an admin seek
	Time       time.Time // when the coordinator accepted it
}

// GroupMetadata is a group as a completed rebalance left it.
type GroupMetadata struct {
	Group      string
	Generation int
	Strategy   Strategy
	Members    []MemberMetadata
	// A group of Kafka clients: its protocol type and leader member.
	ProtocolType string
	Leader       string
	// Topics are those the group's members have subscribed to, including
	// members that have left.
	Topics []string
}

// MemberMetadata is one member of a generation.
type MemberMetadata struct {
	ID             string
	ClientID       string
	Seq            int
	Topics         []string
	SessionTimeout time.Duration
	Assignment     []TopicPartition
	AssignData     []byte // a Kafka client's assignment, as its leader sent it
	// A Kafka client's protocols and rebalance timeout, as it joined: a
	// coordinator that loads the group admits rejoins and new members by
	// them, and hands them to the next leader.
	Protocols        []Protocol
	RebalanceTimeout time.Duration
}

// Record is one decoded record of __consumer_offsets.
type Record struct {
	Kind      RecordKind
	Group     string
	Partition TopicPartition // OffsetCommitRecord
	Offset    Offset         // OffsetCommitRecord
	Metadata  GroupMetadata  // GroupMetadataRecord
}

type offsetValue struct {
	Offset     int64  `json:"offset"`
	Generation int    `json:"generation"`
	Member     string `json:"member,omitempty"`
	TimeMs     int64  `json:"time_ms"`
}

type memberValue struct {
	ID          string          `json:"id"`
	Client      string          `json:"client"`
	Seq         int             `json:"seq"`
	Topics      []string        `json:"topics"`
	SessionMs   int64           `json:"session_ms"`
	Assignment  []string        `json:"assignment"`
	Data        []byte          `json:"data,omitempty"`
	Protocols   []protocolValue `json:"protocols,omitempty"`
	RebalanceMs int64           `json:"rebalance_ms,omitempty"`
}

type protocolValue struct {
	Name     string `json:"name"`
	Metadata []byte `json:"metadata,omitempty"`
}

type groupValue struct {
	Generation int           `json:"generation"`
	Strategy   Strategy      `json:"strategy"`
	Members    []memberValue `json:"members"`
	Protocol   string        `json:"protocol_type,omitempty"`
	Leader     string        `json:"leader,omitempty"`
	Topics     []string      `json:"topics,omitempty"`
}

// EncodeOffsetCommit returns the key and value of an offset commit record.
func EncodeOffsetCommit(group string, tp TopicPartition, o Offset) (key, value []byte) {
	key = []byte("offset " + group + " " + tp.String())
	value, _ = json.Marshal(offsetValue{Offset: o.Offset, Generation: o.Generation, Member: o.Member, TimeMs: o.Time.UnixMilli()})
	return key, value
}

// EncodeGroupMetadata returns the key and value of a group metadata record.
func EncodeGroupMetadata(md GroupMetadata) (key, value []byte) {
	gv := groupValue{Generation: md.Generation, Strategy: md.Strategy, Members: []memberValue{}, Protocol: md.ProtocolType, Leader: md.Leader, Topics: md.Topics}
	for _, m := range md.Members {
		mv := memberValue{ID: m.ID, Client: m.ClientID, Seq: m.Seq, Topics: m.Topics, SessionMs: m.SessionTimeout.Milliseconds(), Assignment: []string{}, Data: m.AssignData,
			RebalanceMs: m.RebalanceTimeout.Milliseconds()}
		for _, p := range m.Protocols {
			mv.Protocols = append(mv.Protocols, protocolValue{Name: p.Name, Metadata: p.Metadata})
		}
		for _, tp := range m.Assignment {
			mv.Assignment = append(mv.Assignment, tp.String())
		}
		gv.Members = append(gv.Members, mv)
	}
	value, _ = json.Marshal(gv)
	return []byte("group " + md.Group), value
}

// DecodeRecord reads a record written by EncodeOffsetCommit or
// EncodeGroupMetadata.
func DecodeRecord(key, value []byte) (Record, error) {
	f := strings.Fields(string(key))
	switch {
	case len(f) == 3 && f[0] == "offset":
		tp, err := parseTopicPartition(f[2])
		if err != nil {
			return Record{}, fmt.Errorf("offset commit record %q: %v", key, err)
		}
		var v offsetValue
		if err := json.Unmarshal(value, &v); err != nil {
			return Record{}, fmt.Errorf("offset commit record %q: %v", key, err)
		}
		return Record{Kind: OffsetCommitRecord, Group: f[1], Partition: tp,
			Offset: Offset{Offset: v.Offset, Generation: v.Generation, Member: v.Member, Time: time.UnixMilli(v.TimeMs)}}, nil
	case len(f) == 2 && f[0] == "group":
		var v groupValue
		if err := json.Unmarshal(value, &v); err != nil {
			return Record{}, fmt.Errorf("group metadata record %q: %v", key, err)
		}
		md := GroupMetadata{Group: f[1], Generation: v.Generation, Strategy: v.Strategy, ProtocolType: v.Protocol, Leader: v.Leader, Topics: v.Topics}
		for _, mv := range v.Members {
			m := MemberMetadata{ID: mv.ID, ClientID: mv.Client, Seq: mv.Seq, Topics: mv.Topics, SessionTimeout: time.Duration(mv.SessionMs) * time.Millisecond, AssignData: mv.Data,
				RebalanceTimeout: time.Duration(mv.RebalanceMs) * time.Millisecond}
			for _, p := range mv.Protocols {
				m.Protocols = append(m.Protocols, Protocol{Name: p.Name, Metadata: p.Metadata})
			}
			for _, s := range mv.Assignment {
				tp, err := parseTopicPartition(s)
				if err != nil {
					return Record{}, fmt.Errorf("group metadata record %q: member %s: %v", key, mv.ID, err)
				}
				m.Assignment = append(m.Assignment, tp)
			}
			md.Members = append(md.Members, m)
		}
		return Record{Kind: GroupMetadataRecord, Group: f[1], Metadata: md}, nil
	}
	return Record{}, fmt.Errorf("%q is not a __consumer_offsets record key", key)
}
