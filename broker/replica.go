package broker

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/disk"
	"github.com/mqlab/mqlab/broker/partcmd"
	"github.com/mqlab/mqlab/broker/raftnet"
)

const controllerGroup = "controller"

// replica is one member of one raft group, living on one node until the
// node is killed. Its disk outlives it.
type replica struct {
	c     *Cluster
	node  string
	group string // "orders/0", "receipts" or "controller"
	kind  groupKind
	disk  *disk.Disk

	r     atomic.Pointer[raft.Raft]
	trans *raftnet.Transport
	sm    stateMachine   // by the group's kind: see partition, queue, controller
	obs   *raft.Observer // leadership changes
	stop  chan struct{}  // closed when the replica shuts down
	done  sync.WaitGroup // the watch goroutine
	ready atomic.Uint64  // the term in which this leader passed its barrier
	// heldBack counts the fetches this replica answered while its log
	// held records above its high-water mark, which it kept back
	heldBack atomic.Int64
	quick    atomic.Bool // a new group's replica on quick-start timeouts until its first leader (timing.go)

	offsets offsetCache  // where the last stored produce entry ends
	entries partcmd.Slab // the buffers of the produce entries it proposes

	mu          sync.Mutex
	waiters     map[uint64]chan stored // acks=1 requests waiting for the leader to store their entry
	truncations []Truncation           // the latest, newest last
}

// stored is what the leader knows once it has written an entry to its own
// log: where the batch sits if it survives.
type stored struct {
	base  int64
	epoch uint64
}

// Truncation is a cut of a replica's uncommitted tail: entries it had
// written that the group's leader never committed.
type Truncation struct {
	Node   string
	From   int64 // first offset cut
	To     int64 // exclusive
	Epochs []uint64
	Reason string
}

func (rep *replica) raft() *raft.Raft { return rep.r.Load() }

func (rep *replica) isLeader() bool {
	r := rep.raft()
	return r != nil && r.State() == raft.Leader
}

// readyLeader reports whether this replica leads and has passed a barrier
// in its current term, so its state machine holds every committed entry.
func (rep *replica) readyLeader() bool {
	r := rep.raft()
	return r != nil && r.State() == raft.Leader && rep.ready.Load() == r.CurrentTerm()
}

func (rep *replica) emit(e Event) {
	e.Node = rep.node
	e.Group = rep.group
	rep.c.events.emit(e)
}

// startReplica builds a replica on d and starts its raft instance. A fresh
// disk is bootstrapped with the given servers (every replica of a new
// group bootstraps with the same configuration, which raft allows).
func (c *Cluster) startReplica(node string, g raftGroup, d *disk.Disk, servers []raft.Server) (*replica, error) {
	group := g.name
	rep := &replica{c: c, node: node, group: group, kind: g.kind, disk: d, stop: make(chan struct{}), waiters: map[uint64]chan stored{}}
	sm, err := c.newStateMachine(rep)
	rep.sm = sm
	if err != nil {
		return nil, fmt.Errorf("replica %s on %s: %w", group, node, err)
	}
	trans, err := c.net.Transport(node, group)
	if err != nil {
		return nil, fmt.Errorf("replica %s on %s: %w", group, node, err)
	}
	rep.trans = trans
	fsm, logs := raft.FSM(sm), sm.logStore(d)
	conf := c.raftConfig(node)
	if g.kind == kindPartition && c.dataDir != "" {
		snapshotOften(conf)
	}
	has, err := raft.HasExistingState(logs, d.Stable, d.Snaps)
	if err != nil {
		trans.Close()
		return nil, err
	}
	if !has && len(servers) > 0 && c.quickStart(conf) {
		rep.quick.Store(true)
	}
	if !has && len(servers) > 0 {
		if err := raft.BootstrapCluster(conf, logs, d.Stable, d.Snaps, trans, raft.Configuration{Servers: servers}); err != nil {
			trans.Close()
			return nil, fmt.Errorf("bootstrap %s on %s: %w", group, node, err)
		}
	}
	r, err := raft.NewRaft(conf, fsm, logs, d.Stable, d.Snaps, trans)
	if err != nil {
		trans.Close()
		return nil, fmt.Errorf("start %s on %s: %w", group, node, err)
	}
	rep.r.Store(r)
	ch := make(chan raft.Observation, 16)
	rep.obs = raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.RaftState)
		return ok
	})
	r.RegisterObserver(rep.obs)
	rep.done.Add(1)
	go rep.watch(ch)
	return rep, nil
}

// watch reports leadership changes and makes a new leader pass a barrier
// before it serves reads: raft signals leadership before the new leader's
// state machine has applied everything committed before it.
func (rep *replica) watch(ch chan raft.Observation) {
	defer rep.done.Done()
	r := rep.raft()
	wasLeader := false
	for {
		select {
		case <-rep.stop:
			return
		case o := <-ch:
			state := o.Data.(raft.RaftState)
			if state == raft.Leader {
				wasLeader = true
				term := r.CurrentTerm()
				rep.emit(Event{Kind: EventLeaderElected, Epoch: term,
					Text: fmt.Sprintf("%s leads %s at epoch %d", rep.node, rep.group, term)})
				if rep.quick.Load() {
					rep.c.settle(rep.group, rep.node)
				}
				if rep.passBarrier(r, term) {
					rep.ready.Store(term)
					rep.c.groups.leaderReady(rep, term) // a new group coordinator rebuilds from the log
				}
			} else if wasLeader {
				wasLeader = false
				rep.c.groups.leaderLost(rep)
				rep.emit(Event{Kind: EventSteppedDown, Epoch: r.CurrentTerm(),
					Text: fmt.Sprintf("%s no longer leads %s (now %s)", rep.node, rep.group, strings.ToLower(state.String()))})
			}
		}
	}
}

// passBarrier makes a new leader apply everything committed before its
// term, trying again while the replica still leads in that term.
func (rep *replica) passBarrier(r *raft.Raft, term uint64) bool {
	return retryBarrier(
		func() error { return rep.wait(r.Barrier(rep.c.requestTimeout())) },
		func() bool { return r.State() == raft.Leader && r.CurrentTerm() == term },
		rep.stop, max(rep.c.timing.CommitTimeout, time.Millisecond), rep.c.timing.HeartbeatTimeout,
		func(err error) {
			rep.c.logf("%s on %s: barrier at epoch %d: %v; trying again", rep.group, rep.node, term, err)
		})
}

// retryBarrier runs barrier until it passes, while leads holds. A barrier
// refused once (raft busy past the request timeout, or a leadership
// transfer under way) would otherwise leave a leader that never serves,
// and every client waiting for one, until the next election.
func retryBarrier(barrier func() error, leads func() bool, stop <-chan struct{}, backoff, most time.Duration, refused func(error)) bool {
	for {
		err := barrier()
		if !leads() {
			return false
		}
		if err == nil {
			return true
		}
		if errors.Is(err, raft.ErrRaftShutdown) {
			return false
		}
		refused(err)
		select {
		case <-stop:
			return false
		default:
		}
		t := time.NewTimer(backoff)
		select {
		case <-stop:
			t.Stop()
			return false
		case <-t.C:
		}
		backoff = min(2*backoff, most)
	}
}

// shutdown stops raft and forgets everything in memory; the disk stays.
func (rep *replica) shutdown() {
	close(rep.stop)
	r := rep.raft()
	r.DeregisterObserver(rep.obs)
	if err := r.Shutdown().Error(); err != nil && !errors.Is(err, raft.ErrRaftShutdown) {
		rep.c.logf("shutdown %s on %s: %v", rep.group, rep.node, err)
	}
	rep.trans.Close()
	rep.done.Wait()
	if f := rep.partition(); f != nil {
		f.mu.Lock()
		f.log.DetachDir() // the folder stays, as a disk does
		f.mu.Unlock()
	}
	rep.mu.Lock()
	for id, w := range rep.waiters {
		close(w)
		delete(rep.waiters, id)
	}
	rep.mu.Unlock()
}

// awaitStored registers interest in the moment this leader writes request
// id's entry to its own log.
func (rep *replica) awaitStored(id uint64) chan stored {
	w := make(chan stored, 1)
	rep.mu.Lock()
	rep.waiters[id] = w
	rep.mu.Unlock()
	return w
}

func (rep *replica) forget(id uint64) {
	rep.mu.Lock()
	delete(rep.waiters, id)
	rep.mu.Unlock()
}

// appliedIndex is the raft index below which every entry is committed and
// applied on this replica.
func (rep *replica) appliedIndex() uint64 {
	_, _, applied := rep.partition().state()
	if r := rep.raft(); r != nil && r.AppliedIndex() > applied {
		applied = r.AppliedIndex()
	}
	return applied
}

// tailEntry is an entry in the replica's raft log beyond what it applied:
// written, not known to be committed.
type tailEntry struct {
	index uint64
	epoch uint64
	base  int64 // offset its first record would take
	count int
	reqID uint64
	data  []byte
}

// tail decodes the headers of the replica's log from the entry after the
// last applied one up to last (inclusive) and says where each batch's
// records would land.
func (rep *replica) tail(last uint64) []tailEntry {
	t, _, _ := rep.tailFrom(last)
	return t
}

// tailFrom is tail, also returning the offset after its last entry (the
// high-water mark when the tail is empty) and the FSM's skipped count, all
// read at the same moment.
func (rep *replica) tailFrom(last uint64) ([]tailEntry, int64, int64) {
	f := rep.partition()
	f.mu.RLock()
	hwm, applied, skipped := f.log.EndOffset(), f.applied, f.skipped.Load()
	f.mu.RUnlock()
	off := hwm
	var out []tailEntry
	for i := applied + 1; i <= last; i++ {
		var l raft.Log
		if err := rep.disk.Logs.GetLog(i, &l); err != nil || l.Type != raft.LogCommand {
			continue
		}
		h, _, err := partcmd.DecodeHeader(l.Data)
		if err != nil || h.Kind != partcmd.Produce {
			continue
		}
		out = append(out, tailEntry{index: i, epoch: l.Term, base: off, count: h.Count, reqID: h.ReqID, data: l.Data})
		off += int64(h.Count)
	}
	return out, off, skipped
}

// logEnd is the replica's log end offset: committed records plus the
// uncommitted tail it has written.
func (rep *replica) logEnd() int64 {
	_, hwm, _ := rep.partition().state()
	last := rep.lastIndex()
	t := rep.tail(last)
	if len(t) == 0 {
		return hwm
	}
	e := t[len(t)-1]
	return e.base + int64(e.count)
}

// lastIndex is the last raft index the replica considers part of its log.
// After a snapshot install raft's own view ends at the snapshot, while
// stale entries may remain on disk until they are overwritten.
func (rep *replica) lastIndex() uint64 {
	last, _ := rep.disk.Logs.LastIndex()
	if r := rep.raft(); r != nil && r.LastIndex() < last {
		last = r.LastIndex()
	}
	return last
}

// BeforeStore notices raft overwriting entries it still has on disk, which
// happens after a snapshot install replaced a divergent tail without a
// DeleteRange; that is a truncation too.
func (rep *replica) BeforeStore(logs []*raft.Log) {
	if len(logs) == 0 {
		return
	}
	first := logs[0].Index
	last, _ := rep.disk.Logs.LastIndex()
	if last == 0 || first > last {
		return
	}
	for i := first; i <= last; i++ {
		var old raft.Log
		if err := rep.disk.Logs.GetLog(i, &old); err != nil {
			continue
		}
		k := int(i - first)
		if k < len(logs) && logs[k].Term == old.Term {
			continue
		}
		if k >= len(logs) {
			return // the new entries match; what lies beyond is not contradicted
		}
		rep.truncate(i, last, "its entries conflict with the leader's after a snapshot install")
		rep.disk.Logs.DeleteRange(i, last)
		return
	}
}

func (rep *replica) AfterStore(logs []*raft.Log) {
	if len(logs) == 0 {
		return
	}
	c := &rep.offsets
	c.mu.Lock()
	defer c.mu.Unlock()
	from := c.next(rep, logs[0].Index)
	to := from
	var epoch uint64
	for _, l := range logs {
		if l.Type != raft.LogCommand {
			continue
		}
		h, _, err := partcmd.DecodeHeader(l.Data)
		if err != nil || h.Kind != partcmd.Produce {
			continue
		}
		rep.mu.Lock()
		w := rep.waiters[h.ReqID]
		rep.mu.Unlock()
		if w != nil {
			select {
			case w <- stored{base: to, epoch: l.Term}:
			default:
			}
		}
		to += int64(h.Count)
		epoch = l.Term
	}
	c.valid, c.index, c.end = true, logs[len(logs)-1].Index, to
	if to > from {
		rep.emit(Event{Kind: EventAppend, Epoch: epoch, From: from, To: to, lazy: true})
	}
}

// offsetCache remembers where the replica's last stored produce entry ends,
// so storing an entry costs no walk of the unapplied tail. A truncation or
// a snapshot restore invalidates it; the next store walks the tail once.
type offsetCache struct {
	mu      sync.Mutex
	valid   bool
	index   uint64 // the last raft index stored
	end     int64  // the offset after it, as predicted when it was stored
	skipped int64  // the FSM's skipped count when end was predicted
}

// next returns the offset the first record stored at index would take.
// c.mu must be held.
func (c *offsetCache) next(rep *replica, index uint64) int64 {
	skipped := rep.partition().skipped.Load()
	if c.valid && index == c.index+1 {
		end := c.end - (skipped - c.skipped)
		c.skipped = skipped
		return end
	}
	_, end, skipped := rep.tailFrom(index - 1)
	c.skipped = skipped
	return end
}

func (c *offsetCache) invalidate() {
	c.mu.Lock()
	c.valid = false
	c.mu.Unlock()
}

// BeforeDelete tells a truncation (a suffix of entries never committed,
// cut because the leader's log disagrees) from a compaction (a prefix
// already in a snapshot). Only entries past the applied index can be cut
// by a conflict; a compaction never goes past the snapshot.
func (rep *replica) BeforeDelete(min, max uint64) {
	if min <= rep.appliedIndex() {
		return
	}
	rep.truncate(min, max, "the new leader's log does not have them")
}

func (rep *replica) truncate(min, max uint64, reason string) {
	defer rep.offsets.invalidate()
	t := rep.tail(max)
	tr := Truncation{Node: rep.node, From: -1, Reason: reason}
	for _, e := range t {
		if e.index < min {
			continue
		}
		if tr.From < 0 {
			tr.From = e.base
		}
		tr.To = e.base + int64(e.count)
		if n := len(tr.Epochs); n == 0 || tr.Epochs[n-1] != e.epoch {
			tr.Epochs = append(tr.Epochs, e.epoch)
		}
	}
	if tr.From < 0 {
		return // only raft's own entries (no-ops, configuration) were cut
	}
	rep.mu.Lock()
	rep.truncations = append(rep.truncations, tr)
	if len(rep.truncations) > 8 {
		rep.truncations = rep.truncations[1:]
	}
	rep.mu.Unlock()
	rep.emit(Event{Kind: EventTruncation, From: tr.From, To: tr.To, Epochs: tr.Epochs,
		Text: fmt.Sprintf("%s on %s truncated offsets %d–%d (epochs %v): %s", rep.group, rep.node, tr.From, tr.To-1, tr.Epochs, reason)})
}
