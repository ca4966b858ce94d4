package broker

// A consumer: its configuration, joining its group when it is created,
// what it reports about itself, its membership of the group (heartbeats
// and rebalances), and its end (Close or Crash). What it does with its
// positions lives beside it, in consumer_positions.go: reading records
// from them, moving them, committing them.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqlab/mqlab/broker/groupcoord"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// ResetPolicy says where a consumer starts on a partition when its group
// has no committed offset there, or the committed offset is no longer in
// the log (retention deleted it).
type ResetPolicy string

const (
	// ResetEarliest starts at the log start offset: the whole retained log
	// (mqlab's default, so a new group sees what was produced before it).
	ResetEarliest ResetPolicy = "earliest"
	// ResetLatest starts at the high-water mark: only new records (Kafka's
	// default).
	ResetLatest ResetPolicy = "latest"
)

// ConsumerConfig configures a consumer: one member of a consumer group.
type ConsumerConfig struct {
	// ClientID names the client; faults (a lost reply, a lost commit) are
	// armed for it, and the group shows it.
	ClientID string
	Group    string
	Topics   []string
	// Strategy spreads partitions over the group's members: range (the
	// default) or round-robin. Every member of a group must use the same.
	Strategy Strategy
	// AutoCommit commits, every AutoCommitInterval (default half the session
	// timeout), the positions of the records returned by earlier polls: a
	// record counts as processed once Poll is called again. It also commits
	// before the consumer gives up its partitions in a rebalance and when it
	// closes.
	AutoCommit         bool
	AutoCommitInterval time.Duration
	// SessionTimeout: the coordinator drops a member it has not heard from
	// for this long (default Config.SessionTimeout, which follows the
	// timing preset). HeartbeatInterval defaults to a fifteenth of it, the
	// ratio of Kafka's defaults (3 s of 45 s). A member learns of a
	// rebalance from its next heartbeat, so a join waits up to one
	// interval: a third of the classroom's 10 s kept a class waiting 3 s
	// for every consumer a step started.
	SessionTimeout    time.Duration
	HeartbeatInterval time.Duration
	// ResetPolicy: earliest (default) or latest.
	ResetPolicy ResetPolicy
	// MaxPollRecords bounds the records one Poll returns (default 100).
	MaxPollRecords int
	// MaxRecordsPerSecond caps the rate at which Poll hands out records,
	// like a consumer that can only process so many (0: no cap).
	MaxRecordsPerSecond float64
	// PollTimeout is how long Poll waits for records when none are ready
	// (default one heartbeat timeout of the timing preset).
	PollTimeout time.Duration
	// OnRevoke, if set, is called when the consumer gives up its
	// partitions in a rebalance it is still a member of, once the
	// application has finished the records it held (or the wait for it
	// ran out). It returns the offsets of records processed and not yet
	// committed; they are committed in the generation being left, as a
	// Kafka application commits in onPartitionsRevoked. The next
	// generation starts every partition at the group's last commit, so
	// without it a member that kept a partition would read those records
	// again. It runs on the consumer's own goroutine, not the
	// application's.
	OnRevoke func() map[TopicPartition]int64
}

// ConsumerRecord is a record with the partition it came from and the
// group generation in which it was fetched: once the group has moved to
// a newer generation the record belongs to the partition's owner in that
// one, who reads it again from the group's last commit.
type ConsumerRecord struct {
	TopicPartition
	Record
	Generation int
}

// Consumer is a member of a consumer group: it joins, heartbeats from a
// goroutine of its own, follows rebalances, reads committed records of its
// partitions and commits its positions in __consumer_offsets.
//
// Requests cross the fault network: fetches are data requests, commits are
// acks (DropNextAck loses one, DropNextReply loses its answer), and joins,
// heartbeats, leaves and offset lookups are metadata requests, never
// dropped. Poll and the commit and seek methods are meant for one
// goroutine, the consumer's "application"; the accessors are safe from
// any.
type Consumer struct {
	c      *Cluster
	cfg    ConsumerConfig
	ctx    context.Context // ends with Close or Crash
	cancel context.CancelFunc
	done   chan struct{} // the heartbeat loop has stopped
	wake   chan struct{} // rejoin now
	paused atomic.Bool   // StopHeartbeats
	pollMu sync.Mutex

	mu         sync.Mutex
	state      string // "joining", "active", "closed", "crashed"
	memberID   string
	generation int
	assignment []TopicPartition
	epoch      uint64                   // bumps when positions change under a Poll's feet
	pos        map[TopicPartition]int64 // next offset to read; -1 = apply the reset policy
	consumed   map[TopicPartition]int64 // positions when the latest Poll started: what auto-commit commits
	committed  map[TopicPartition]int64 // the newest offsets known committed for the group
	needJoin   bool
	// Handing partitions back: the records Poll hands out count as processed
	// once the application polls again or commits them all. A rebalance
	// waits for that (up to a third of the session timeout) before it gives
	// up the partitions, as Kafka revokes inside poll().
	delivered  bool          // records handed out since the last release
	released   chan struct{} // closed and replaced at every release
	revoking   bool          // giving up the partitions: Poll hands out nothing
	coord      string        // cached coordinator node
	rr         int
	lastCommit time.Time
	tokens     float64
	refilled   time.Time
}

// NewConsumer creates a consumer and returns once it has joined its group
// (its first generation is assigned). ctx bounds the join.
func (c *Cluster) NewConsumer(ctx context.Context, cfg ConsumerConfig) (*Consumer, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	cfg, err := c.consumerDefaults(cfg)
	if err != nil {
		return nil, err
	}
	cn := &Consumer{c: c, cfg: cfg, done: make(chan struct{}), wake: make(chan struct{}, 1), state: "joining", released: make(chan struct{}),
		pos: map[TopicPartition]int64{}, consumed: map[TopicPartition]int64{}, committed: map[TopicPartition]int64{}}
	cn.ctx, cn.cancel = context.WithCancel(context.Background())
	cn.tokens, cn.refilled = cn.batch(), time.Now()
	if err := cn.rejoin(ctx, false); err != nil {
		cn.cancel()
		return nil, fmt.Errorf("consumer %s: %w", cfg.ClientID, err)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cn.cancel()
		return nil, ErrClosed
	}
	c.wg.Add(1) // under c.mu: Close cannot be waiting yet; it stops the loop through c.stop
	c.mu.Unlock()
	go cn.loop()
	return cn, nil
}

func (c *Cluster) consumerDefaults(cfg ConsumerConfig) (ConsumerConfig, error) {
	bad := func(format string, args ...any) (ConsumerConfig, error) {
		return cfg, fmt.Errorf("%w: consumer %s: %s", ErrInvalid, cfg.ClientID, fmt.Sprintf(format, args...))
	}
	if cfg.ClientID == "" {
		return cfg, fmt.Errorf("%w: a consumer needs a client id", ErrInvalid)
	}
	if cfg.Group == "" {
		return bad("name its group")
	}
	if err := groupcoord.ValidateGroupName(cfg.Group); err != nil {
		return cfg, fmt.Errorf("consumer %s: %w", cfg.ClientID, gcErr(err))
	}
	if len(cfg.Topics) == 0 {
		return bad("subscribe to at least one topic")
	}
	for _, t := range cfg.Topics {
		if IsInternalTopic(t) {
			return bad("%s is internal; consumers cannot subscribe to it", t)
		}
		if _, err := c.topicPartition(TopicPartition{Topic: t}); err != nil && !errors.Is(err, ErrUnknownPartition) {
			return cfg, fmt.Errorf("consumer %s: %w", cfg.ClientID, err)
		}
	}
	s, err := ParseStrategy(string(cfg.Strategy))
	if err != nil {
		return cfg, fmt.Errorf("consumer %s: %w", cfg.ClientID, err)
	}
	cfg.Strategy = s
	switch cfg.ResetPolicy {
	case "":
		cfg.ResetPolicy = ResetEarliest
	case ResetEarliest, ResetLatest:
	default:
		return bad("reset policy %q; want earliest or latest", cfg.ResetPolicy)
	}
	if cfg.SessionTimeout < 0 || cfg.HeartbeatInterval < 0 || cfg.AutoCommitInterval < 0 || cfg.PollTimeout < 0 {
		return bad("timeouts and intervals cannot be negative")
	}
	if cfg.MaxPollRecords < 0 || cfg.MaxRecordsPerSecond < 0 {
		return bad("max poll records and max records per second cannot be negative")
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = c.groups.session
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = cfg.SessionTimeout / 15
	}
	if cfg.HeartbeatInterval >= cfg.SessionTimeout {
		return bad("heartbeat interval %v must be below the session timeout %v", cfg.HeartbeatInterval, cfg.SessionTimeout)
	}
	if cfg.AutoCommitInterval == 0 {
		cfg.AutoCommitInterval = cfg.SessionTimeout / 2
	}
	if cfg.MaxPollRecords == 0 {
		cfg.MaxPollRecords = 100
	}
	if cfg.PollTimeout == 0 {
		cfg.PollTimeout = c.timing.HeartbeatTimeout
	}
	cfg.Topics = slices.Clone(cfg.Topics)
	return cfg, nil
}

// ClientID returns the client's name.
func (cn *Consumer) ClientID() string { return cn.cfg.ClientID }

// Group returns the consumer's group.
func (cn *Consumer) Group() string { return cn.cfg.Group }

// MemberID returns the member id the coordinator gave it ("" between
// memberships).
func (cn *Consumer) MemberID() string {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.memberID
}

// Generation returns the generation of its current assignment (0 while it
// has none).
func (cn *Consumer) Generation() int {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.generation
}

// Assignment returns its partitions in the current generation; empty while
// it rejoins, or when it is idle.
func (cn *Consumer) Assignment() []TopicPartition {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return slices.Clone(cn.assignment)
}

// State is "joining", "active", "closed" or "crashed".
func (cn *Consumer) State() string {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.state
}

// Position returns the next offset it will read from tp; ok is false when
// tp is not assigned to it or its position awaits the reset policy.
func (cn *Consumer) Position(tp TopicPartition) (int64, bool) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	p, ok := cn.pos[tp]
	return p, ok && p >= 0
}

func (cn *Consumer) checkUsable() error {
	if err := cn.c.checkOpen(); err != nil {
		return err
	}
	cn.mu.Lock()
	defer cn.mu.Unlock()
	switch cn.state {
	case "closed", "crashed":
		return fmt.Errorf("%w: %s has %s", ErrConsumerClosed, cn.cfg.ClientID, cn.state)
	}
	return nil
}

func (cn *Consumer) requestCtx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, cn.c.requestTimeout())
}

// Close leaves the group, committing first with auto-commit, and stops
// the consumer. The group rebalances at once instead of waiting for the
// session timeout.
func (cn *Consumer) Close() error {
	cn.mu.Lock()
	if cn.state == "closed" || cn.state == "crashed" {
		cn.mu.Unlock()
		return nil
	}
	active := cn.state == "active"
	cn.mu.Unlock()
	var err error
	if active {
		cn.mu.Lock()
		offsets := map[TopicPartition]int64{}
		if cn.cfg.AutoCommit {
			offsets = cn.commitableLocked(cn.pos)
		}
		member, gen := cn.memberID, cn.generation
		cn.mu.Unlock()
		ctx, cancel := cn.requestCtx(context.Background())
		if len(offsets) > 0 {
			err = cn.sendCommit(ctx, member, gen, offsets)
		}
		cancel()
	}
	cn.stopLoop("closed")
	cn.mu.Lock()
	member := cn.memberID
	cn.mu.Unlock()
	if member != "" {
		ctx, cancel := cn.requestCtx(context.Background())
		lerr := cn.c.coordinatorCall(ctx, cn.cfg.ClientID, cn.cfg.Group, raftnet.RequestMetadata, nil, func(co *coordinator) error {
			return co.leave(cn.cfg.Group, member)
		})
		cancel()
		if lerr != nil && !errors.Is(lerr, ErrUnknownMember) && !errors.Is(lerr, ErrClosed) {
			err = errors.Join(err, fmt.Errorf("leave group %s: %w", cn.cfg.Group, lerr))
		}
	}
	return err
}

// Crash stops the consumer as if its process died: no commit, no leave.
// The group notices only when its session times out.
func (cn *Consumer) Crash() {
	cn.mu.Lock()
	if cn.state == "closed" || cn.state == "crashed" {
		cn.mu.Unlock()
		return
	}
	cn.mu.Unlock()
	cn.stopLoop("crashed")
	cn.c.events.emit(Event{Kind: EventConsumerCrashed, Client: cn.cfg.ClientID, ConsumerGroup: cn.cfg.Group,
		Text: fmt.Sprintf("%s crashed: it stops heartbeating without leaving group %s; its session of %v must run out", cn.cfg.ClientID, cn.cfg.Group, cn.cfg.SessionTimeout)})
}

func (cn *Consumer) stopLoop(state string) {
	cn.mu.Lock()
	cn.state = state
	cn.mu.Unlock()
	cn.cancel()
	<-cn.done
}

// A consumer's membership of its group: the heartbeat loop, giving up
// its partitions when the group rebalances, and joining the next
// generation.

// loop heartbeats, rejoins when the group rebalances and auto-commits.
func (cn *Consumer) loop() {
	defer cn.c.wg.Done()
	defer close(cn.done)
	t := time.NewTicker(cn.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-cn.ctx.Done():
			return
		case <-cn.c.stop:
			return
		case <-t.C:
		case <-cn.wake:
		}
		if cn.paused.Load() {
			continue
		}
		cn.mu.Lock()
		join := cn.needJoin
		cn.mu.Unlock()
		if join {
			cn.rejoin(cn.ctx, false)
			continue
		}
		cn.heartbeat()
		cn.autoCommit(false)
	}
}

// heartbeat sends one heartbeat and reacts to the answer.
func (cn *Consumer) heartbeat() {
	cn.mu.Lock()
	member, gen := cn.memberID, cn.generation
	coord := cn.coord
	cn.mu.Unlock()
	ctx, cancel := cn.requestCtx(cn.ctx)
	defer cancel()
	var res groupcoord.HeartbeatResult
	err := cn.c.coordinatorCall(ctx, cn.cfg.ClientID, cn.cfg.Group, raftnet.RequestMetadata, &coord, func(co *coordinator) error {
		var e error
		res, e = co.heartbeat(cn.cfg.Group, member, gen)
		return e
	})
	cn.mu.Lock()
	cn.coord = coord
	switch {
	case err == nil:
		for gtp, off := range res.Seeks {
			tp := fromGC(gtp)
			if _, ok := cn.pos[tp]; ok {
				cn.pos[tp], cn.consumed[tp], cn.committed[tp] = off, off, off
				cn.epoch++
			}
		}
	case errors.Is(err, ErrUnknownMember):
		cn.memberID = ""
		cn.needJoin = true
	case errors.Is(err, ErrStaleGeneration):
		cn.needJoin = true
	}
	join, graceful := cn.needJoin, errors.Is(err, ErrRebalanceInProgress)
	cn.mu.Unlock()
	if join || graceful {
		cn.rejoin(cn.ctx, graceful)
	}
}

// releaseLocked marks every record handed out so far as processed.
func (cn *Consumer) releaseLocked() {
	cn.delivered = false
	close(cn.released)
	cn.released = make(chan struct{})
}

// rejoin gives up the partitions and joins the group until the new
// generation is assigned. In a graceful rebalance (the group asked, the
// member is still in it) it first lets the application finish the records
// it holds, and with auto-commit commits what was processed; a fenced
// member's partitions already belong to others.
func (cn *Consumer) rejoin(parent context.Context, graceful bool) error {
	cn.mu.Lock()
	cn.revoking = true
	wait := graceful && cn.delivered && cn.generation > 0
	released := cn.released
	cn.mu.Unlock()
	if wait {
		t := time.NewTimer(cn.cfg.SessionTimeout / 3)
		select {
		case <-released:
		case <-t.C:
		case <-parent.Done():
		}
		t.Stop()
	}
	cn.mu.Lock()
	var revoke map[TopicPartition]int64
	if graceful && cn.cfg.AutoCommit && cn.generation > 0 {
		revoke = cn.commitableLocked(cn.consumed)
	}
	member, gen, assigned, committed := cn.memberID, cn.generation, cn.assignment, maps.Clone(cn.committed)
	cn.assignment, cn.generation = nil, 0
	cn.pos = map[TopicPartition]int64{}
	cn.epoch++
	cn.needJoin = true
	cn.delivered = false
	if cn.state == "active" {
		cn.state = "joining"
	}
	cn.mu.Unlock()
	// Asked only now that the generation is over for the application
	// too, so that nothing it finishes after the answer is missed: what
	// it finishes later it cannot commit, and the next generation reads
	// it again. A consumer that is closing or crashing is not asked.
	if graceful && gen > 0 && cn.cfg.OnRevoke != nil && parent.Err() == nil {
		for tp, off := range cn.cfg.OnRevoke() {
			if prev, ok := committed[tp]; !slices.Contains(assigned, tp) || off < 0 || ok && off <= prev {
				continue
			}
			if revoke == nil {
				revoke = map[TopicPartition]int64{}
			}
			revoke[tp] = max(revoke[tp], off)
		}
	}
	if len(revoke) > 0 {
		ctx, cancel := cn.requestCtx(parent)
		cn.sendCommit(ctx, member, gen, revoke) // best effort: if fenced, the new owner starts from the last commit
		cancel()
	}
	// The coordinator answers once every member rejoined or the rebalance
	// deadline (the longest session timeout) passed.
	ctx, cancel := context.WithTimeout(parent, 2*cn.cfg.SessionTimeout+cn.c.requestTimeout())
	defer cancel()
	for attempt := 0; ; attempt++ {
		cn.mu.Lock()
		member, coord := cn.memberID, cn.coord
		cn.mu.Unlock()
		var res groupcoord.JoinResult
		err := cn.c.coordinatorCall(ctx, cn.cfg.ClientID, cn.cfg.Group, raftnet.RequestMetadata, &coord, func(co *coordinator) error {
			var e error
			res, e = co.join(ctx, groupcoord.JoinRequest{Group: cn.cfg.Group, MemberID: member, ClientID: cn.cfg.ClientID,
				Topics: cn.cfg.Topics, Strategy: cn.cfg.Strategy, SessionTimeout: cn.cfg.SessionTimeout})
			if e != nil && member == "" && errors.Is(e, ErrNotCoordinator) {
				// A coordinator that lost its lead while writing the join
				// down named the member first: ask the next one under that
				// name, which it knows if the write held (and if not, the
				// unknown member joins afresh, below).
				member = res.MemberID
			}
			return e
		})
		cn.mu.Lock()
		cn.coord = coord
		if errors.Is(err, ErrUnknownMember) && member != "" && attempt < 3 {
			cn.memberID = "" // the group forgot us: join as a new member
			cn.mu.Unlock()
			continue
		}
		err = cn.joinedLocked(res, err)
		cn.mu.Unlock()
		return err
	}
}

// joinedLocked takes the answer to a join: the generation, the partitions
// and where to start on each.
func (cn *Consumer) joinedLocked(res groupcoord.JoinResult, err error) error {
	if err = gcErr(err); err != nil {
		if errors.Is(err, ErrInvalid) || errors.Is(err, ErrInconsistentStrategy) {
			return err
		}
		return fmt.Errorf("join group %s: %w", cn.cfg.Group, err)
	}
	if cn.state != "joining" {
		return fmt.Errorf("%w: %s has %s", ErrConsumerClosed, cn.cfg.ClientID, cn.state)
	}
	cn.memberID, cn.generation = res.MemberID, res.Generation
	cn.assignment = fromGCs(res.Assignment)
	cn.pos = map[TopicPartition]int64{}
	cn.consumed = map[TopicPartition]int64{}
	cn.committed = map[TopicPartition]int64{}
	for gtp, off := range res.Committed {
		tp := fromGC(gtp)
		cn.pos[tp] = off // -1: the reset policy decides at the first poll
		if off >= 0 {
			cn.consumed[tp], cn.committed[tp] = off, off
		}
	}
	cn.epoch++
	cn.needJoin, cn.revoking, cn.delivered = false, false, false
	cn.state = "active"
	cn.lastCommit = time.Now()
	return nil
}

// StopHeartbeats simulates a member the group gives up on while it goes
// on working — a long pause of its process, a starved heartbeat thread:
// its heartbeats (and rejoins, and auto-commits) stop, but Poll and the
// commit methods still work, so it can act as the zombie it becomes once
// its session expires. ResumeHeartbeats undoes it.
func (cn *Consumer) StopHeartbeats() { cn.paused.Store(true) }

// ResumeHeartbeats restarts the heartbeats after StopHeartbeats; a member
// the group dropped meanwhile rejoins as a new member.
func (cn *Consumer) ResumeHeartbeats() { cn.paused.Store(false) }
