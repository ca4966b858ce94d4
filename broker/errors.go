package broker

import (
	"errors"

	"github.com/mqlab/mqlab/broker/partlog"
)

// Errors callers branch on. Each is wrapped with the specifics: which
// topic, which node, what was expected.
var (
	// ErrInvalid marks bad input: a name, a number or an option out of range.
	ErrInvalid = errors.New("invalid request")
	// ErrInvalidConfig: a topic's configuration (segments, retention,
	// cleanup) is out of range or contradicts itself. It comes with
	// ErrInvalid.
	ErrInvalidConfig = errors.New("invalid topic config")
	// ErrUnknownTopic: no topic by that name.
	ErrUnknownTopic = errors.New("unknown topic")
	// ErrUnknownPartition: the topic has no such partition.
	ErrUnknownPartition = errors.New("unknown partition")
	// ErrUnknownNode: no node by that name.
	ErrUnknownNode = errors.New("unknown node")
	// ErrTopicExists: a topic by that name already exists.
	ErrTopicExists = errors.New("topic already exists")
	// ErrNodeDown: the node is down (killing it again, or asking it).
	ErrNodeDown = errors.New("node is down")
	// ErrNodeUp: the node is already running (restarting it).
	ErrNodeUp = errors.New("node is up")
	// ErrNotLeader: the replica asked does not lead its group (or has not
	// yet caught up as a new leader). Retry against the current leader.
	ErrNotLeader = errors.New("not the leader")
	// ErrNoLeader: the group has no leader right now (an election, or too
	// few replicas alive).
	ErrNoLeader = errors.New("no leader")
	// ErrUnknownOutcome: the request reached a leader that lost leadership
	// or died before it could answer; the write may or may not commit.
	ErrUnknownOutcome = errors.New("outcome unknown")
	// ErrStorage: the replica asked cannot write its segment files (its
	// disk is full or failing), so it takes no produce; a retry goes on
	// once another replica leads. Kafka answers KAFKA_STORAGE_ERROR.
	// When it comes with ErrUnknownOutcome, the batch reached raft before
	// the write failed and the other replicas may hold it.
	ErrStorage = errors.New("storage error")
	// ErrClosed: the cluster has been closed.
	ErrClosed = errors.New("cluster closed")

	// ErrOffsetOutOfRange: a read below the log start or past the log end.
	ErrOffsetOutOfRange = partlog.ErrOffsetOutOfRange
	// ErrOutOfOrderSequence: an idempotent producer skipped sequence numbers.
	ErrOutOfOrderSequence = partlog.ErrOutOfOrderSequence
	// ErrDuplicateSequence: a repeat too old for the partition to answer.
	ErrDuplicateSequence = partlog.ErrDuplicateSequence
	// ErrNoKey: a record without a key sent to a compacted topic.
	ErrNoKey = partlog.ErrNoKey
)
