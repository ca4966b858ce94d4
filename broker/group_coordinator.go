package broker

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker/groupcoord"
	"github.com/mqlab/mqlab/broker/partlog"
)

// coordinator is the group coordinator on one leader of one partition of
// __consumer_offsets, for one term: an adapter around groupcoord's plain
// state. It is volatile, like everything a node holds in memory: a kill,
// a step-down or a new term ends it, and the next leader builds its own
// from the committed log.
//
// Session and rebalance deadlines run on the wall clock, like raft's own
// timers, so a lab's speed or pause does not expire members whose
// heartbeats run in real time; commit times and lag use the cluster's
// clock, like record timestamps.
type coordinator struct {
	c    *Cluster
	rep  *replica
	part int
	term uint64

	stop     chan struct{} // closed when it stops coordinating
	stopOnce sync.Once

	mu      sync.Mutex
	state   *groupcoord.Coordinator
	changed chan struct{}          // closed and replaced when a waiting join might be answerable
	writes  map[string]*sync.Mutex // per group: its records reach the log in the order its state changes
}

func newCoordinator(c *Cluster, rep *replica, part int, term uint64) *coordinator {
	return &coordinator{c: c, rep: rep, part: part, term: term, stop: make(chan struct{}),
		state: groupcoord.New(c.partitionCount), changed: make(chan struct{}), writes: map[string]*sync.Mutex{}}
}

// load replays the replica's committed log into the plain state: the
// latest offset commit of each group and partition and the latest
// metadata of each group win. It runs before the coordinator serves, right
// after the barrier, so nothing else writes meanwhile.
func (co *coordinator) load() (groups, records, skipped int) {
	f := co.rep.partition()
	f.mu.RLock()
	l := f.log
	for off := l.StartOffset(); off < l.EndOffset(); {
		recs, err := l.Read(off, 1000)
		if err != nil || len(recs) == 0 {
			break
		}
		for _, r := range recs {
			rec, err := groupcoord.DecodeRecord(r.Key, r.Value)
			if err != nil {
				skipped++
				continue
			}
			co.state.Load(rec)
			records++
		}
		off = recs[len(recs)-1].Offset + 1
	}
	f.mu.RUnlock()
	co.state.FinishLoad(co.c.sessions.Now())
	return len(co.state.Groups()), records, skipped
}

// serving reports whether the coordinator may answer: it has not stopped
// and its replica still leads, ready, in its term.
func (co *coordinator) serving() bool {
	select {
	case <-co.stop:
		return false
	case <-co.rep.stop:
		return false
	default:
	}
	return co.rep.readyLeader() && co.rep.ready.Load() == co.term
}

// current confirms that this coordinator still leads its partition of
// __consumer_offsets: a majority answers a round of raft heartbeats. An
// answer read from the state without a write to the log needs it. A
// leader cut off from the others believes it leads until its lease runs
// out, and meanwhile a new leader may take commits this one never sees: a
// member that joined here would start below them and read again what the
// group already committed.
func (co *coordinator) current() error {
	if err := co.rep.verifyLeader(); err != nil || !co.serving() {
		return fmt.Errorf("%w: %s on %s no longer leads it", ErrNotCoordinator, co.rep.group, co.rep.node)
	}
	return nil
}

func (co *coordinator) halt() {
	co.stopOnce.Do(func() { close(co.stop) })
}

// run expires sessions and ends overdue rebalances, and retries writing
// group metadata that did not reach the log. It belongs to the replica:
// shutdown waits for it.
func (co *coordinator) run() {
	defer co.rep.done.Done()
	defer co.c.groups.forget(co)
	t := time.NewTicker(co.c.groups.tick)
	defer t.Stop()
	for {
		select {
		case <-co.stop:
			return
		case <-co.rep.stop:
			return
		case <-t.C:
		}
		if !co.serving() {
			continue
		}
		co.mu.Lock()
		changes := co.state.Tick(co.c.sessions.Now())
		pending := co.state.Unpersisted()
		if len(changes) > 0 {
			co.broadcastLocked()
		}
		co.mu.Unlock()
		co.emitChanges(changes)
		for _, g := range pending {
			if err := co.persist(g); err != nil {
				co.c.logf("coordinator %s on %s: persist group %s: %v", co.rep.group, co.rep.node, g, err)
			}
		}
	}
}

func (co *coordinator) broadcastLocked() {
	close(co.changed)
	co.changed = make(chan struct{})
}

func (co *coordinator) writeLock(group string) *sync.Mutex {
	co.mu.Lock()
	defer co.mu.Unlock()
	l := co.writes[group]
	if l == nil {
		l = &sync.Mutex{}
		co.writes[group] = l
	}
	return l
}

// append writes records to this partition of __consumer_offsets with
// acks=all: it returns once they are committed.
func (co *coordinator) append(records ...partlog.Record) error {
	if !co.serving() {
		return fmt.Errorf("%w: %s on %s stopped coordinating", ErrNotCoordinator, co.rep.group, co.rep.node)
	}
	_, err := co.rep.produce(partlog.Batch{Records: records}, AcksAll)
	switch {
	case errors.Is(err, ErrNotLeader):
		return fmt.Errorf("%w: %v", ErrNotCoordinator, err)
	case errors.Is(err, ErrUnknownOutcome):
		// The coordinator lost its lead while writing: the group's next
		// coordinator has the write or not, and the client asks it again,
		// as a Kafka client does on NOT_COORDINATOR.
		return fmt.Errorf("%w: %w", ErrNotCoordinator, err)
	}
	return err
}

// persist writes the group's metadata for its newest generation, if it is
// not in the log yet, and then lets the group go stable.
func (co *coordinator) persist(group string) error {
	wl := co.writeLock(group)
	wl.Lock()
	defer wl.Unlock()
	co.mu.Lock()
	md, ok := co.state.Metadata(group)
	co.mu.Unlock()
	if !ok {
		return nil
	}
	k, v := groupcoord.EncodeGroupMetadata(md)
	if err := co.append(partlog.Record{Key: k, Value: v}); err != nil {
		return err
	}
	co.mu.Lock()
	changes := co.state.Persisted(group, md.Generation)
	co.broadcastLocked()
	co.mu.Unlock()
	co.emitChanges(changes)
	return nil
}

// join handles a join request and waits for its answer: the rebalance it
// started or joined must complete and be persisted.
func (co *coordinator) join(ctx context.Context, req groupcoord.JoinRequest) (groupcoord.JoinResult, error) {
	co.mu.Lock()
	res, changes, err := co.state.Join(req, co.c.sessions.Now())
	if err == nil || len(changes) > 0 {
		// An accepted join may complete the generation others wait for,
		// with no change to report: a Kafka group's leader waits on it.
		co.broadcastLocked()
	}
	co.mu.Unlock()
	co.emitChanges(changes)
	if err != nil {
		return res, err
	}
	if res.Ready {
		// A member already in the stable generation: its answer, with the
		// group's committed offsets, comes from memory.
		return res, co.current()
	}
	for !res.Ready {
		if err := co.persist(req.Group); err != nil {
			return res, err
		}
		co.mu.Lock()
		res, err = co.state.JoinStatus(req.Group, res.MemberID, res.After)
		ch := co.changed
		co.mu.Unlock()
		if err != nil || res.Ready {
			return res, err
		}
		if err := co.awaitChange(ctx, ch); err != nil {
			return res, err
		}
	}
	return res, nil
}

// awaitChange waits for ch, the coordinator's change signal, to close.
func (co *coordinator) awaitChange(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-co.stop:
	case <-co.rep.stop:
	}
	return fmt.Errorf("%w: %s on %s stopped coordinating", ErrNotCoordinator, co.rep.group, co.rep.node)
}

// sync handles a SyncGroup of a Kafka client and waits for its answer:
// the leader's assignment, persisted with the generation.
func (co *coordinator) sync(ctx context.Context, group, member string, generation int, assignments map[string]groupcoord.SyncAssignment) ([]byte, error) {
	co.mu.Lock()
	res, err := co.state.Sync(group, member, generation, assignments, co.c.sessions.Now())
	co.mu.Unlock()
	for err == nil && !res.Ready {
		if err := co.persist(group); err != nil {
			return nil, err
		}
		co.mu.Lock()
		res, err = co.state.SyncStatus(group, member, generation)
		ch := co.changed
		co.mu.Unlock()
		if err != nil || res.Ready {
			break
		}
		if err := co.awaitChange(ctx, ch); err != nil {
			return nil, err
		}
	}
	return res.Data, err
}

func (co *coordinator) heartbeat(group, member string, generation int) (groupcoord.HeartbeatResult, error) {
	co.mu.Lock()
	defer co.mu.Unlock()
	return co.state.Heartbeat(group, member, generation, co.c.sessions.Now())
}

func (co *coordinator) leave(group, member string) error {
	co.mu.Lock()
	changes, err := co.state.Leave(group, member, co.c.sessions.Now())
	co.broadcastLocked()
	co.mu.Unlock()
	co.emitChanges(changes)
	if err != nil {
		return err
	}
	return co.persist(group)
}

// commit validates a member's offsets against its generation and
// assignment and stores them with acks=all. A fenced commit is an event.
func (co *coordinator) commit(client, group, member string, generation int, offsets map[TopicPartition]int64) error {
	wl := co.writeLock(group)
	wl.Lock()
	defer wl.Unlock()
	gc := make(map[groupcoord.TopicPartition]int64, len(offsets))
	for tp, off := range offsets {
		gc[toGC(tp)] = off
	}
	co.mu.Lock()
	err := co.state.ValidateCommit(group, member, generation, gc)
	co.mu.Unlock()
	if err != nil {
		if errors.Is(err, ErrFenced) {
			co.rep.emit(Event{Kind: EventFencedCommit, Client: client, ConsumerGroup: group, Member: member, Generation: generation,
				Text: fmt.Sprintf("commit from %s rejected: %v", client, err)})
		}
		return gcErr(err)
	}
	return co.store(client, group, member, generation, offsets)
}

// store writes offset commit records and applies them once committed.
func (co *coordinator) store(client, group, member string, generation int, offsets map[TopicPartition]int64) error {
	tps := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool { return groupLess(tps[i].String(), tps[j].String()) })
	now := co.c.now()
	records := make([]partlog.Record, len(tps))
	parts := make([]string, len(tps))
	for i, tp := range tps {
		k, v := groupcoord.EncodeOffsetCommit(group, toGC(tp), groupcoord.Offset{Offset: offsets[tp], Generation: generation, Member: member, Time: now})
		records[i] = partlog.Record{Key: k, Value: v}
		parts[i] = fmt.Sprintf("%s → %d", tp, offsets[tp])
	}
	if err := co.append(records...); err != nil {
		return err
	}
	co.mu.Lock()
	for _, tp := range tps {
		co.state.ApplyOffset(group, toGC(tp), groupcoord.Offset{Offset: offsets[tp], Generation: generation, Member: member, Time: now})
	}
	co.mu.Unlock()
	who := client
	if generation >= 0 {
		who = fmt.Sprintf("%s (generation %d)", client, generation)
	}
	co.rep.emit(Event{Kind: EventOffsetCommit, Client: client, ConsumerGroup: group, Member: member, Generation: generation,
		Text: fmt.Sprintf("group %s committed %s for %s", group, strings.Join(parts, ", "), who)})
	return nil
}

// adminSeek sets a group's committed offset for tp without a member (the
// lab's seek command) and hands the position to the member that owns tp
// with its next heartbeat. It returns that member's client id, or "".
func (co *coordinator) adminSeek(group string, tp TopicPartition, offset int64, how string) (string, error) {
	wl := co.writeLock(group)
	wl.Lock()
	defer wl.Unlock()
	co.mu.Lock()
	_, known := co.state.Describe(group)
	co.mu.Unlock()
	if !known {
		return "", fmt.Errorf("%w: %q; the groups are %s", ErrUnknownGroup, group, strings.Join(co.c.groupNames(), ", "))
	}
	if err := co.store("seek", group, "", -1, map[TopicPartition]int64{tp: offset}); err != nil {
		return "", err
	}
	co.mu.Lock()
	owner := co.state.RequestSeek(group, toGC(tp), offset)
	co.mu.Unlock()
	text := fmt.Sprintf("group %s seeks %s to %d (%s)", group, tp, offset, how)
	if owner != "" {
		text += fmt.Sprintf("; %s, which owns it, moves there with its next heartbeat", owner)
	}
	co.rep.emit(Event{Kind: EventOffsetCommit, Client: "seek", ConsumerGroup: group, Text: text})
	return owner, nil
}

// committed reads the group's committed offsets for tps, -1 for none,
// once it is sure it still coordinates.
func (co *coordinator) committed(group string, tps []TopicPartition) (map[TopicPartition]int64, error) {
	if err := co.current(); err != nil {
		return nil, err
	}
	gc := make([]groupcoord.TopicPartition, len(tps))
	for i, tp := range tps {
		gc[i] = toGC(tp)
	}
	co.mu.Lock()
	got := co.state.Committed(group, gc)
	co.mu.Unlock()
	out := make(map[TopicPartition]int64, len(got))
	for tp, off := range got {
		out[fromGC(tp)] = off
	}
	return out, nil
}

func (co *coordinator) describe(group string) (groupcoord.Group, bool) {
	co.mu.Lock()
	defer co.mu.Unlock()
	return co.state.Describe(group)
}

func (co *coordinator) describeAll() []groupcoord.Group {
	co.mu.Lock()
	defer co.mu.Unlock()
	var out []groupcoord.Group
	for _, g := range co.state.Groups() {
		d, _ := co.state.Describe(g)
		out = append(out, d)
	}
	return out
}

var changeKinds = map[groupcoord.ChangeKind]EventKind{
	groupcoord.MemberJoined:     EventMemberJoined,
	groupcoord.MemberLeft:       EventMemberLeft,
	groupcoord.SessionExpired:   EventSessionExpired,
	groupcoord.RebalanceStarted: EventRebalanceStarted,
	groupcoord.Rebalanced:       EventRebalance,
}

func (co *coordinator) emitChanges(changes []groupcoord.Change) {
	for _, ch := range changes {
		co.rep.emit(Event{Kind: changeKinds[ch.Kind], Client: ch.ClientID, ConsumerGroup: ch.Group, Member: ch.Member, Generation: ch.Generation, Text: ch.Text})
	}
}
