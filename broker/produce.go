package broker

import (
	"errors"
	"fmt"

	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/partcmd"
	"github.com/mqlab/mqlab/broker/partlog"
)

// Acks says when a leader answers a produce request.
type Acks int

const (
	// AcksNone: the producer does not wait for any answer (fire and forget).
	AcksNone Acks = 0
	// AcksLeader: the leader answers once it has written the batch to its
	// own log. The batch is not yet on a majority and a failover can lose it.
	AcksLeader Acks = 1
	// AcksAll: the leader answers once a majority of replicas hold the batch:
	// it is committed.
	AcksAll Acks = -1
)

func (a Acks) String() string {
	switch a {
	case AcksNone:
		return "0"
	case AcksLeader:
		return "1"
	case AcksAll:
		return "all"
	}
	return fmt.Sprintf("acks(%d)", int(a))
}

// ParseAcks reads "0", "1" or "all".
func ParseAcks(s string) (Acks, error) {
	switch s {
	case "0":
		return AcksNone, nil
	case "1":
		return AcksLeader, nil
	case "all", "-1":
		return AcksAll, nil
	}
	return 0, fmt.Errorf("%w: acks=%s; want 0, 1 or all", ErrInvalid, s)
}

// produceResponse is a leader's answer to one batch.
type produceResponse struct {
	base      int64
	epoch     uint64
	duplicate bool
}

// produce is the leader's handling of one produce request. Errors wrapping
// ErrNotLeader mean nothing was written; ErrUnknownOutcome means it may
// have been.
func (rep *replica) produce(b partlog.Batch, acks Acks) (produceResponse, error) {
	r := rep.raft()
	if r == nil || r.State() != raft.Leader {
		return produceResponse{}, fmt.Errorf("%w: %s on %s", ErrNotLeader, rep.group, rep.node)
	}
	now := rep.c.now().UnixNano()
	for i := range b.Records {
		if b.Records[i].Timestamp == 0 {
			b.Records[i].Timestamp = now
		}
	}
	id := rep.c.reqID.Add(1)
	data := partcmd.EncodeProduceIn(rep.entries.Alloc, id, now, b)
	var storedCh chan stored
	if acks == AcksLeader {
		storedCh = rep.awaitStored(id)
		defer rep.forget(id)
	}
	f := r.Apply(data, rep.c.requestTimeout())
	switch acks {
	case AcksNone:
		return produceResponse{base: -1}, nil
	case AcksLeader:
		select {
		case s, ok := <-storedCh:
			if ok {
				return produceResponse{base: s.base, epoch: s.epoch}, nil
			}
			return produceResponse{}, fmt.Errorf("%w: %s on %s shut down", ErrUnknownOutcome, rep.group, rep.node)
		case err := <-rep.await(f):
			if err != nil {
				return produceResponse{}, rep.applyError(err)
			}
			return resultOf(f)
		case <-rep.stop:
			return produceResponse{}, rep.applyError(raft.ErrRaftShutdown)
		}
	}
	if err := rep.wait(f); err != nil {
		return produceResponse{}, rep.applyError(err)
	}
	return resultOf(f)
}

// await delivers a raft future's error. raft v1.8.0 can leave a future
// unanswered for good: an entry handed to its FSM goroutine's buffered
// channel just before shutdown is neither applied nor answered. So a caller
// also waits for the replica to stop (wait does both), and the goroutine
// reading the future is left to raft (it ends if raft answers).
func (rep *replica) await(f raft.Future) <-chan error {
	answer := make(chan error, 1)
	go func() { answer <- f.Error() }()
	return answer
}

// wait returns a raft future's error, or ErrRaftShutdown once the replica
// stops. The caller selects on the answer itself rather than through a
// second goroutine: on the produce path every hand-off between goroutines
// adds to the latency of each batch.
func (rep *replica) wait(f raft.Future) error {
	select {
	case err := <-rep.await(f):
		return err
	case <-rep.stop:
		return raft.ErrRaftShutdown
	}
}

func resultOf(f raft.ApplyFuture) (produceResponse, error) {
	res, ok := f.Response().(applyResult)
	if !ok {
		return produceResponse{}, fmt.Errorf("unexpected apply response %T", f.Response())
	}
	if res.err != nil {
		return produceResponse{}, res.err
	}
	return produceResponse{base: res.res.BaseOffset, epoch: res.epoch, duplicate: res.res.Duplicate}, nil
}

// applyError sorts raft's errors into "nothing written, retry" and
// "unknown: it may still commit".
func (rep *replica) applyError(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress), errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("%w: %s on %s: %v", ErrNotLeader, rep.group, rep.node, err)
	default: // ErrLeadershipLost, ErrRaftShutdown, ErrAbortedByRestore
		return fmt.Errorf("%w: %s on %s: %v", ErrUnknownOutcome, rep.group, rep.node, err)
	}
}
