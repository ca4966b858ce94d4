package broker

// One partition replica: the state machine every replica applies
// committed entries with, over partlog.Log, and the leader's write path
// that proposes them (Acks says when it answers).

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/partcmd"
	"github.com/mqlab/mqlab/broker/partlog"
)

// partitionFSM is the raft state machine of one partition replica: a thin
// adapter over partlog.Log, which has the logic and its own tests. Only
// committed entries reach Apply, so everything in the log is committed and
// its end offset is this replica's high-water mark.
type partitionFSM struct {
	rep *replica

	mu      sync.RWMutex
	log     *partlog.Log
	applied uint64 // raft index of the last entry applied
	// skipped counts records of applied produce entries that took no
	// offsets (a repeated batch, a refused one). The store hook predicted
	// offsets for them; it subtracts these to stay exact.
	skipped atomic.Int64
	// grew is closed when the log next grows, for readers waiting at its
	// end (a Kafka long poll); nil until one asks.
	grew chan struct{}
	// filesDown: the log's files have stopped (a failed write) and the
	// timeline has been told.
	filesDown bool
	handing   atomic.Bool // a leadership transfer away from a failed disk is under way
	stuck     atomic.Bool // such a transfer failed, and the timeline was told
}

// growth returns a channel closed when the log next grows.
func (f *partitionFSM) growth() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.grew == nil {
		f.grew = make(chan struct{})
	}
	return f.grew
}

type applyResult struct {
	res   partlog.AppendResult
	epoch uint64 // the epoch the batch was written in (the original one for a duplicate)
	err   error
	// storage is why this replica could not write the batch to its
	// segment files (it is in the log, in memory, all the same).
	storage error
	// A compact entry's pass; cleaned is false when there was nothing to
	// clean (no closed segment).
	compacted partlog.CompactResult
	cleaned   bool
}

// Apply stores a produce entry's batch without decoding its records: the
// log keeps the encoded batch, a slice of l.Data, and decodes records only
// when they are read. That is safe because raft never modifies an entry's
// Data once it is stored, and nothing in the broker does either (followers
// get the leader's entries by reference over raftnet; a LogStore that
// reused its buffers between GetLog calls would need a copy here).
func (f *partitionFSM) Apply(l *raft.Log) interface{} {
	cmd, batch, err := partcmd.DecodeHeader(l.Data)
	if err == nil && cmd.Kind == partcmd.Produce {
		err = partcmd.CheckCount(cmd, batch)
	}
	if err != nil {
		f.mu.Lock()
		f.applied = l.Index
		f.skipped.Add(int64(cmd.Count))
		f.mu.Unlock()
		return applyResult{err: err}
	}
	var out applyResult
	f.mu.Lock()
	if l.Index <= f.applied {
		// Already in the log: a restarted replica read it back from its
		// files (see openFiles), and raft replays from its snapshot.
		f.mu.Unlock()
		return out
	}
	f.applied = l.Index
	if cmd.Kind == partcmd.Produce {
		out.res, out.err = f.log.AppendEncoded(batch, l.Term)
		if out.err == nil && !out.res.Duplicate {
			f.log.NoteApplied(l.Index)
			out.storage = f.log.FilesErr()
		}
		if errors.Is(out.err, partlog.ErrCorrupt) {
			out.err = fmt.Errorf("%w: %v", partcmd.ErrBad, out.err)
		}
		out.epoch = l.Term
		if out.err != nil || out.res.Duplicate {
			f.skipped.Add(int64(cmd.Count))
		}
		if out.err == nil && out.res.Duplicate {
			if recs, err := f.log.Read(out.res.BaseOffset, 1); err == nil && len(recs) == 1 {
				out.epoch = recs[0].Epoch
			}
		}
	}
	if cmd.Kind == partcmd.Compact {
		out.compacted, out.cleaned = f.log.Compact(cmd.Now)
	}
	deleted := f.log.EnforceRetention(cmd.Now)
	hwm, start := f.log.EndOffset(), f.log.StartOffset()
	if f.grew != nil && cmd.Kind == partcmd.Produce && out.err == nil && !out.res.Duplicate {
		close(f.grew)
		f.grew = nil
	}
	filesStopped := out.storage != nil && !f.filesDown
	f.filesDown = f.filesDown || out.storage != nil
	f.mu.Unlock()

	if filesStopped {
		f.rep.emit(Event{Kind: EventFiles, Text: fmt.Sprintf("%s stopped writing %s's segment files: %v; its log goes on in memory, it hands leadership on at the next produce, and a restart rebuilds the files",
			f.rep.node, f.rep.group, out.storage)})
	}
	if f.rep.isLeader() {
		if cmd.Kind == partcmd.Produce && out.err == nil && !out.res.Duplicate {
			f.rep.emit(Event{Kind: EventCommit, Epoch: l.Term, From: out.res.BaseOffset, To: hwm, lazy: true})
		}
		// A pass proposed in an earlier term is one a new leader replays:
		// it was reported when it ran.
		if out.cleaned && l.Term == f.rep.raft().CurrentTerm() {
			r := out.compacted
			text := fmt.Sprintf("cleaned %s offsets %s–%s: %s → %s records (%s → %d)", f.rep.group,
				thousands(r.From), thousands(r.To-1), thousands(r.RecordsBefore), thousands(r.RecordsAfter), plural(r.SegmentsBefore, "segment"), r.SegmentsAfter)
			if r.Tombstones > 0 {
				text += fmt.Sprintf("; %d tombstone(s) past delete retention removed", r.Tombstones)
			}
			f.rep.emit(Event{Kind: EventCompacted, From: r.From, To: r.To, Text: text})
		}
		for _, s := range deleted {
			f.rep.emit(Event{Kind: EventSegmentDeleted, From: s.BaseOffset, To: s.NextOffset,
				Text: fmt.Sprintf("%s retention deleted segment %d–%d; log now starts at %d", f.rep.group, s.BaseOffset, s.NextOffset-1, start)})
		}
	}
	return out
}

// state returns what a reader of this replica sees, consistently.
func (f *partitionFSM) state() (start, hwm int64, applied uint64) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.log.StartOffset(), f.log.EndOffset(), f.applied
}

func (f *partitionFSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	// A point-in-time copy of the log's structure is cheap; encoding it
	// happens in Persist, while Apply goes on.
	return &logSnapshot{applied: f.applied, log: f.log.Snapshot()}, nil
}

// logSnapshot is a partition replica's state at one raft index.
type logSnapshot struct {
	applied uint64
	log     *partlog.Snapshot
}

// Persist writes to the sink directly, without a buffer in between: the
// replica's snapshot store is a partlog.SharingWriter, which keeps the
// log's stored batches by reference instead of copying the whole log into
// every snapshot (and any other sink gets partlog's own buffering).
func (s *logSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(binary.AppendUvarint(nil, s.applied)); err != nil {
		sink.Cancel()
		return err
	}
	if _, err := s.log.WriteTo(sink); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *logSnapshot) Release() {}

func (f *partitionFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	br := bufio.NewReader(rc)
	applied, err := binary.ReadUvarint(br)
	if err != nil {
		return fmt.Errorf("restore %s: %w", f.rep.group, err)
	}
	f.mu.RLock()
	have := f.applied
	f.mu.RUnlock()
	if applied <= have {
		// Raft restores its latest snapshot when a replica starts, but a
		// log read back from its files already holds all of it.
		return nil
	}
	// A replica with files writes the log to them as it reads it, so a
	// large snapshot is never in memory whole; they take the place of
	// the folder once the log does.
	dir := f.filesDir()
	var l *partlog.Log
	if dir != "" {
		l, err = partlog.ReadLogToDir(br, dir, f.writeFault)
	} else {
		l, err = partlog.ReadLog(br)
	}
	if err != nil {
		return fmt.Errorf("restore %s: %w", f.rep.group, err)
	}
	f.rep.offsets.invalidate()
	f.mu.Lock()
	f.log.DetachDir()
	f.log, f.applied = l, applied
	if dir != "" {
		f.log.SetWriteFault(f.writeFault)
		if err := f.log.MoveDir(dir); err != nil {
			f.rep.emit(Event{Kind: EventFiles, Text: fmt.Sprintf("%s cannot write %s's segment files: %v", f.rep.node, f.rep.group, err)})
		}
		f.log.NoteApplied(f.applied)
	}
	f.filesDown = f.log.FilesErr() != nil
	inFiles := f.log.Dir() != "" && !f.filesDown
	f.mu.Unlock()
	if r := f.rep.raft(); inFiles && r != nil {
		// The snapshot store holds the snapshot as it arrived, the whole
		// log's bytes, which the files now hold: a snapshot of the
		// replica's own, naming the files, replaces it. Raft's snapshot
		// goroutine takes it, once this restore has returned.
		go r.Snapshot()
	}
	return nil
}

// bytesSnapshot is a state machine snapshot already encoded, so Persist can
// run while Apply goes on.
type bytesSnapshot struct{ data []byte }

func (s *bytesSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s.data); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *bytesSnapshot) Release() {}

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
	r, err := rep.admit(firstUnkeyed(b.Records))
	if err != nil {
		return produceResponse{}, err
	}
	now := rep.c.now().UnixNano()
	// A record's timestamp is whole milliseconds, as Kafka's are: that is
	// what its segment file keeps, so a record reads the same from the
	// file as it did from memory, and a closed segment's bytes can live
	// in the file alone.
	stamp := now - now%int64(time.Millisecond)
	for i := range b.Records {
		if b.Records[i].Timestamp == 0 {
			b.Records[i].Timestamp = stamp
		}
	}
	id := rep.c.reqID.Add(1)
	files := rep.c.dataDir != "" && !rep.c.filesOff.Load()
	return rep.propose(r, id, partcmd.EncodeProduceIn(rep.entries.Alloc, id, now, b, files), acks)
}

// produceKafka is produce for a Kafka client's batch as it arrived
// (checked by the listener): the raft entry carries its bytes, and every
// replica keeps and files them.
func (rep *replica) produceKafka(b WireBatch, acks Acks) (produceResponse, error) {
	r, err := rep.admit(b.Unkeyed)
	if err != nil {
		return produceResponse{}, err
	}
	now := rep.c.now().UnixNano()
	id := rep.c.reqID.Add(1)
	return rep.propose(r, id, partcmd.EncodeProduceKafka(rep.entries.Alloc, id, now, b.Raw, b.Count, b.KVBytes, b.MinTS), acks)
}

// admit is what a leader checks before it proposes a batch whose record
// unkeyed is the first without a key (-1: none): that it leads, that a
// compacted topic's records have keys, and that its files take writes (a
// replica that cannot write hands leadership on).
func (rep *replica) admit(unkeyed int) (*raft.Raft, error) {
	r := rep.raft()
	if r == nil || r.State() != raft.Leader {
		return nil, fmt.Errorf("%w: %s on %s", ErrNotLeader, rep.group, rep.node)
	}
	if err := rep.refuseUnkeyed(unkeyed); err != nil {
		return nil, err
	}
	if err := rep.partition().filesFailed(); err != nil {
		rep.partition().handOff(r)
		return nil, fmt.Errorf("%w: %s on %s cannot write its segment files: %v", ErrStorage, rep.group, rep.node, err)
	}
	return r, nil
}

// propose replicates a produce entry and waits as acks asks.
func (rep *replica) propose(r *raft.Raft, id uint64, data []byte, acks Acks) (produceResponse, error) {
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
			return rep.resultOf(f)
		case <-rep.stop:
			return produceResponse{}, rep.applyError(raft.ErrRaftShutdown)
		}
	}
	if err := rep.wait(f); err != nil {
		return produceResponse{}, rep.applyError(err)
	}
	return rep.resultOf(f)
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

func (rep *replica) resultOf(f raft.ApplyFuture) (produceResponse, error) {
	res, ok := f.Response().(applyResult)
	if !ok {
		return produceResponse{}, fmt.Errorf("unexpected apply response %T", f.Response())
	}
	if res.err != nil {
		return produceResponse{}, res.err
	}
	if res.storage != nil {
		// Committed, but not in this replica's files: the client hears of
		// the failure, and the batch may well be read later.
		return produceResponse{}, fmt.Errorf("%w (%w): %s on %s could not write the batch at offset %d to its segment files: %v",
			ErrStorage, ErrUnknownOutcome, rep.group, rep.node, res.res.BaseOffset, res.storage)
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
