package kafkawire

import (
	"errors"
	"fmt"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// Kafka's error codes, those the nodes answer with.
const (
	codeNone                     int16 = 0
	codeUnknownServerError       int16 = -1
	codeOffsetOutOfRange         int16 = 1
	codeCorruptMessage           int16 = 2
	codeUnknownTopicOrPartition  int16 = 3
	codeLeaderNotAvailable       int16 = 5
	codeNotLeaderOrFollower      int16 = 6
	codeRequestTimedOut          int16 = 7
	codeCoordinatorNotAvailable  int16 = 15
	codeNotCoordinator           int16 = 16
	codeInvalidTopic             int16 = 17
	codeIllegalGeneration        int16 = 22
	codeInconsistentGroupProto   int16 = 23
	codeInvalidGroupID           int16 = 24
	codeUnknownMemberID          int16 = 25
	codeInvalidSessionTimeout    int16 = 26
	codeInvalidTimestamp         int16 = 32
	codeRebalanceInProgress      int16 = 27
	codeUnsupportedVersion       int16 = 35
	codeKafkaStorageError        int16 = 56
	codeTopicAlreadyExists       int16 = 36
	codeInvalidPartitions        int16 = 37
	codeInvalidReplicationFactor int16 = 38
	codeInvalidRequest           int16 = 42
	codeOutOfOrderSequence       int16 = 45
	codeDuplicateSequence        int16 = 46
	codeGroupIDNotFound          int16 = 69
	codeFencedLeaderEpoch        int16 = 74
	codeUnknownLeaderEpoch       int16 = 75
	codeUnsupportedCompression   int16 = 76
	codeInvalidRecord            int16 = 87
	codeInvalidConfig            int16 = 40
)

// code is the Kafka error code for a broker error.
func code(err error) int16 {
	switch {
	case err == nil:
		return codeNone
	case errors.Is(err, broker.ErrUnknownTopic), errors.Is(err, broker.ErrUnknownPartition):
		return codeUnknownTopicOrPartition
	case errors.Is(err, broker.ErrNotLeader):
		return codeNotLeaderOrFollower
	case errors.Is(err, broker.ErrNoLeader):
		return codeLeaderNotAvailable
	case errors.Is(err, broker.ErrOffsetOutOfRange):
		return codeOffsetOutOfRange
	case errors.Is(err, broker.ErrOutOfOrderSequence):
		return codeOutOfOrderSequence
	case errors.Is(err, broker.ErrNoKey):
		return codeInvalidRecord
	case errors.Is(err, broker.ErrDuplicateSequence):
		return codeDuplicateSequence
	case errors.Is(err, broker.ErrFencedEpoch):
		return codeFencedLeaderEpoch
	case errors.Is(err, broker.ErrUnknownEpoch):
		return codeUnknownLeaderEpoch
	case errors.Is(err, broker.ErrNotCoordinator):
		return codeNotCoordinator
	case errors.Is(err, broker.ErrRebalanceInProgress):
		return codeRebalanceInProgress
	case errors.Is(err, broker.ErrStaleGeneration):
		return codeIllegalGeneration
	case errors.Is(err, broker.ErrUnknownMember):
		return codeUnknownMemberID
	case errors.Is(err, broker.ErrInconsistentStrategy):
		return codeInconsistentGroupProto
	case errors.Is(err, broker.ErrUnknownGroup):
		return codeGroupIDNotFound
	case errors.Is(err, broker.ErrTopicExists):
		return codeTopicAlreadyExists
	case errors.Is(err, broker.ErrStorage):
		// Before the outcome: a batch that reached raft before the write
		// failed is a storage error too, which a producer retries.
		return codeKafkaStorageError
	case errors.Is(err, broker.ErrUnknownOutcome), errors.Is(err, raftnet.ErrUnreachable), errors.Is(err, broker.ErrClosed):
		// The write may or may not have happened, or the request never got
		// through: a timeout, which a producer retries.
		return codeRequestTimedOut
	case errors.Is(err, broker.ErrInvalid):
		return codeInvalidRequest
	}
	return codeUnknownServerError
}

// groupCode is code for group requests, where "no leader" means the
// coordinator is not available yet.
func groupCode(err error) int16 {
	if errors.Is(err, broker.ErrNoLeader) {
		return codeCoordinatorNotAvailable
	}
	if errors.Is(err, broker.ErrInvalid) {
		return codeInvalidGroupID
	}
	return code(err)
}

func errText(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

// codeNames are Kafka's names for the codes, as a client's log prints them.
var codeNames = map[int16]string{
	codeUnknownServerError: "UNKNOWN_SERVER_ERROR", codeOffsetOutOfRange: "OFFSET_OUT_OF_RANGE", codeCorruptMessage: "CORRUPT_MESSAGE",
	codeUnknownTopicOrPartition: "UNKNOWN_TOPIC_OR_PARTITION", codeLeaderNotAvailable: "LEADER_NOT_AVAILABLE",
	codeNotLeaderOrFollower: "NOT_LEADER_OR_FOLLOWER", codeRequestTimedOut: "REQUEST_TIMED_OUT",
	codeCoordinatorNotAvailable: "COORDINATOR_NOT_AVAILABLE", codeNotCoordinator: "NOT_COORDINATOR", codeInvalidTopic: "INVALID_TOPIC_EXCEPTION",
	codeIllegalGeneration: "ILLEGAL_GENERATION", codeInconsistentGroupProto: "INCONSISTENT_GROUP_PROTOCOL", codeInvalidGroupID: "INVALID_GROUP_ID",
	codeUnknownMemberID: "UNKNOWN_MEMBER_ID", codeInvalidSessionTimeout: "INVALID_SESSION_TIMEOUT", codeInvalidTimestamp: "INVALID_TIMESTAMP", codeRebalanceInProgress: "REBALANCE_IN_PROGRESS",
	codeUnsupportedVersion: "UNSUPPORTED_VERSION", codeTopicAlreadyExists: "TOPIC_ALREADY_EXISTS", codeInvalidPartitions: "INVALID_PARTITIONS",
	codeInvalidReplicationFactor: "INVALID_REPLICATION_FACTOR", codeInvalidRequest: "INVALID_REQUEST",
	codeOutOfOrderSequence: "OUT_OF_ORDER_SEQUENCE_NUMBER", codeDuplicateSequence: "DUPLICATE_SEQUENCE_NUMBER",
	codeGroupIDNotFound: "GROUP_ID_NOT_FOUND", codeFencedLeaderEpoch: "FENCED_LEADER_EPOCH", codeUnknownLeaderEpoch: "UNKNOWN_LEADER_EPOCH",
	codeUnsupportedCompression: "UNSUPPORTED_COMPRESSION_TYPE", codeInvalidRecord: "INVALID_RECORD", codeInvalidConfig: "INVALID_CONFIG",
}

// answered puts an error answer in the timeline: "n2 answered
// billing-1's commit to group billing with ILLEGAL_GENERATION: …". The same answer to
// the same connection within a second is said once: a client retrying
// through a failover asks the same thing many times.
func (r *request) answered(what string, c int16, err error) {
	if c == codeNone {
		return
	}
	cn := r.cn
	who := r.client
	if who == "" {
		who = "a client"
	}
	text := fmt.Sprintf("%s answered %s's %s with %s", cn.node, who, what, codeNames[c])
	if err != nil {
		text += ": " + err.Error()
	}
	cn.mu.Lock()
	now := time.Now()
	if cn.said == text && now.Sub(cn.saidAt) < time.Second {
		cn.mu.Unlock()
		return
	}
	cn.said, cn.saidAt = text, now
	cn.mu.Unlock()
	cn.s.c.Report(broker.Event{Node: cn.node, Client: r.client, Text: text})
}
