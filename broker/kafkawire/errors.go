package kafkawire

import (
	"errors"

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
	codeRebalanceInProgress      int16 = 27
	codeUnsupportedVersion       int16 = 35
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
