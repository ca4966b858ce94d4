package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/partlog"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// MaxNodes bounds a cluster: a lab selects nodes with the keys 1–9.
const MaxNodes = 9

// Config configures a cluster.
type Config struct {
	Nodes  int
	Timing Timing // zero value means FastTiming
	// Now is the clock for record timestamps, retention and events; the lab
	// passes its own so that speed and pause apply. Defaults to time.Now.
	Now func() time.Time
	// RaftLog turns raft's own warnings into events. Raft never writes to
	// the terminal either way.
	RaftLog bool
	// OffsetsPartitions is the number of partitions of the internal topic
	// __consumer_offsets (default 1: each is a raft group).
	OffsetsPartitions int
	// SessionTimeout is consumers' default group session timeout; zero
	// follows the timing preset (ten heartbeat timeouts: 1 s fast, 10 s
	// classroom).
	SessionTimeout time.Duration
}

// Cluster is a set of broker nodes in one process.
type Cluster struct {
	timing Timing
	now    func() time.Time
	net    *raftnet.Network
	events *eventBus
	logger hclog.Logger

	admin sync.Mutex // serialises kill, restart, topic creation and close

	mu      sync.Mutex
	nodeIDs []string
	nodes   map[string]*node
	topics  map[string]topicRecord
	queues  queueRegistry // queues and exchanges
	groups  *groupService // consumer group coordinators
	closed  bool

	reqID atomic.Uint64
	stop  chan struct{}
	wg    sync.WaitGroup // housekeeping and request goroutines
}

type node struct {
	id       string
	up       bool
	disks    map[string]*disk    // survives Kill
	replicas map[string]*replica // gone on Kill
}

// NewCluster starts cfg.Nodes nodes named n1…nN and waits for the
// controller group to elect a leader.
func NewCluster(cfg Config) (*Cluster, error) {
	if cfg.Nodes < 1 || cfg.Nodes > MaxNodes {
		return nil, fmt.Errorf("%w: nodes=%d; want 1 to %d", ErrInvalid, cfg.Nodes, MaxNodes)
	}
	if cfg.Timing.Name == "" {
		cfg.Timing = FastTiming
	}
	if err := cfg.Timing.validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Cluster{
		timing: cfg.Timing,
		now:    cfg.Now,
		events: newEventBus(cfg.Now),
		nodes:  map[string]*node{},
		topics: map[string]topicRecord{},
		stop:   make(chan struct{}),
	}
	groups, err := newGroupService(c, cfg)
	if err != nil {
		return nil, err
	}
	c.groups = groups
	c.net = raftnet.New(raftnet.Options{RPCTimeout: cfg.Timing.RPCTimeout, OnDrop: c.faultFired})
	c.logger = hclog.NewNullLogger()
	if cfg.RaftLog {
		c.logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: eventWriter{c}, DisableTime: true})
	}
	var servers []raft.Server
	for i := 1; i <= cfg.Nodes; i++ {
		id := fmt.Sprintf("n%d", i)
		c.nodeIDs = append(c.nodeIDs, id)
		c.nodes[id] = &node{id: id, up: true, disks: map[string]*disk{}, replicas: map[string]*replica{}}
		servers = append(servers, raft.Server{ID: raft.ServerID(id), Address: raftnet.Addr(id, controllerGroup)})
	}
	for _, id := range c.nodeIDs {
		if err := c.startOn(id, controllerGroup, servers); err != nil {
			c.Close()
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*c.timing.ElectionTimeout+5*time.Second)
	defer cancel()
	if _, err := c.waitReadyLeader(ctx, controllerGroup); err != nil {
		c.Close()
		return nil, fmt.Errorf("start cluster: %w", err)
	}
	if err := c.createOffsetsTopic(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("start cluster: %w", err)
	}
	c.wg.Add(1)
	go c.housekeep()
	return c, nil
}

// eventWriter turns raft's log lines into events.
type eventWriter struct{ c *Cluster }

func (w eventWriter) Write(p []byte) (int, error) {
	w.c.events.emit(Event{Kind: EventRaftLog, Text: strings.TrimSpace(string(p))})
	return len(p), nil
}

func (c *Cluster) logf(format string, args ...any) {
	c.logger.Warn(fmt.Sprintf(format, args...))
}

// Nodes returns the node ids in order.
func (c *Cluster) Nodes() []string { return append([]string(nil), c.nodeIDs...) }

// Timing returns the cluster's raft timing preset.
func (c *Cluster) Timing() Timing { return c.timing }

// Subscribe streams events from now on. Close the subscription when done.
func (c *Cluster) Subscribe(buffer int) *Subscription { return c.events.subscribe(buffer) }

// Events returns the retained events after seq (0 for all retained).
func (c *Cluster) Events(since uint64) []Event { return c.events.since(since) }

func (c *Cluster) raftConfig(nodeID string) *raft.Config {
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(nodeID)
	conf.HeartbeatTimeout = c.timing.HeartbeatTimeout
	conf.ElectionTimeout = c.timing.ElectionTimeout
	conf.LeaderLeaseTimeout = c.timing.LeaderLeaseTimeout
	conf.CommitTimeout = c.timing.CommitTimeout
	conf.SnapshotInterval = c.timing.SnapshotInterval
	conf.SnapshotThreshold = c.timing.SnapshotThreshold
	conf.TrailingLogs = c.timing.TrailingLogs
	conf.Logger = c.logger
	conf.NoLegacyTelemetry = true
	return conf
}

func (c *Cluster) partlogConfig(group string) (partlog.Config, error) {
	tp, err := ParseTopicPartition(group)
	if err != nil {
		return partlog.Config{}, err
	}
	c.mu.Lock()
	rec, ok := c.topics[tp.Topic]
	c.mu.Unlock()
	if !ok {
		return partlog.Config{}, fmt.Errorf("%w: %s", ErrUnknownTopic, tp.Topic)
	}
	return rec.Config.partlogConfig(), nil
}

// startOn starts the replica of group on a live node from its disk.
func (c *Cluster) startOn(nodeID, group string, servers []raft.Server) error {
	c.mu.Lock()
	n := c.nodes[nodeID]
	d := n.disks[group]
	if d == nil {
		d = newDisk()
		n.disks[group] = d
	}
	c.mu.Unlock()
	rep, err := c.startReplica(nodeID, group, d, servers)
	if err != nil {
		return err
	}
	c.mu.Lock()
	n.replicas[group] = rep
	c.mu.Unlock()
	return nil
}

// Close stops every node and waits for every goroutine the cluster started.
func (c *Cluster) Close() error {
	c.admin.Lock()
	defer c.admin.Unlock()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	var reps []*replica
	for _, n := range c.nodes {
		for _, r := range n.replicas {
			reps = append(reps, r)
		}
		n.replicas = map[string]*replica{}
	}
	c.mu.Unlock()
	close(c.stop)
	shutdownAll(reps)
	c.wg.Wait()
	c.events.closeAll()
	return nil
}

func shutdownAll(reps []*replica) {
	var wg sync.WaitGroup
	for _, r := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.shutdown()
		}()
	}
	wg.Wait()
}

func (c *Cluster) checkOpen() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	return nil
}

func (c *Cluster) node(id string) (*node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	n := c.nodes[id]
	if n == nil {
		return nil, fmt.Errorf("%w: %q; the nodes are %s", ErrUnknownNode, id, strings.Join(c.nodeIDs, ", "))
	}
	return n, nil
}

// Kill stops a node as if its process died: its raft instances and all its
// memory are gone, its disk stays.
func (c *Cluster) Kill(id string) error {
	c.admin.Lock()
	defer c.admin.Unlock()
	n, err := c.node(id)
	if err != nil {
		return fmt.Errorf("kill: %w", err)
	}
	c.mu.Lock()
	if !n.up {
		c.mu.Unlock()
		return fmt.Errorf("kill %s: %w already; restart it first", id, ErrNodeDown)
	}
	n.up = false
	reps := make([]*replica, 0, len(n.replicas))
	for _, r := range n.replicas {
		reps = append(reps, r)
	}
	n.replicas = map[string]*replica{}
	c.mu.Unlock()
	c.net.SetDown(id, true)
	shutdownAll(reps)
	c.events.emit(Event{Kind: EventNodeKilled, Node: id, Text: fmt.Sprintf("%s killed: its memory is gone, its disk stays", id)})
	return nil
}

// Restart brings a killed node back: every replica it hosts is rebuilt
// from its disk and rejoins its group.
func (c *Cluster) Restart(id string) error {
	c.admin.Lock()
	defer c.admin.Unlock()
	n, err := c.node(id)
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	c.mu.Lock()
	if n.up {
		c.mu.Unlock()
		return fmt.Errorf("restart %s: %w already; kill it first", id, ErrNodeUp)
	}
	n.up = true
	groups := c.groupsOnLocked(id)
	c.mu.Unlock()
	c.net.SetDown(id, false)
	for _, g := range groups {
		if err := c.startOn(id, g, nil); err != nil {
			return fmt.Errorf("restart %s: %w", id, err)
		}
	}
	c.events.emit(Event{Kind: EventNodeRestarted, Node: id, Text: fmt.Sprintf("%s restarted from its disk", id)})
	return nil
}

func (c *Cluster) topicsLocked() []topicRecord {
	out := make([]topicRecord, 0, len(c.topics))
	for _, t := range c.topics {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := IsInternalTopic(out[i].Config.Name), IsInternalTopic(out[j].Config.Name); a != b {
			return b // internal topics last
		}
		return out[i].Seq < out[j].Seq
	})
	return out
}

// Isolate cuts every link of a node, to its peers and to clients.
func (c *Cluster) Isolate(id string) error {
	if _, err := c.node(id); err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	c.net.Isolate(id)
	c.events.emit(Event{Kind: EventLinkCut, Node: id, Text: fmt.Sprintf("%s isolated: no peer and no client reaches it", id)})
	return nil
}

// Partition cuts the node-to-node links between the sides; clients still
// reach every node. Nodes on no side keep their links.
func (c *Cluster) Partition(sides ...[]string) error {
	if len(sides) < 2 {
		return fmt.Errorf("%w: partition needs at least two sides, e.g. n1 | n2,n3", ErrInvalid)
	}
	seen := map[string]bool{}
	var names []string
	for _, side := range sides {
		if len(side) == 0 {
			return fmt.Errorf("%w: partition: a side is empty", ErrInvalid)
		}
		for _, id := range side {
			if _, err := c.node(id); err != nil {
				return fmt.Errorf("partition: %w", err)
			}
			if seen[id] {
				return fmt.Errorf("%w: partition: %s is on two sides", ErrInvalid, id)
			}
			seen[id] = true
		}
		names = append(names, strings.Join(side, ","))
	}
	c.net.Partition(sides...)
	c.events.emit(Event{Kind: EventLinkCut, Text: "network partitioned: " + strings.Join(names, " | ")})
	return nil
}

// Heal restores every link and removes every added latency.
func (c *Cluster) Heal() {
	c.net.Heal()
	c.events.emit(Event{Kind: EventLinkHealed, Text: "every link healed"})
}

// Slow adds latency to every message to or from a node; 0 removes it.
func (c *Cluster) Slow(id string, d time.Duration) error {
	if _, err := c.node(id); err != nil {
		return fmt.Errorf("slow: %w", err)
	}
	if d < 0 {
		return fmt.Errorf("%w: slow %s: latency %v is negative", ErrInvalid, id, d)
	}
	c.net.Slow(id, d)
	text := fmt.Sprintf("%s slowed by %v each way", id, d)
	if d == 0 {
		text = fmt.Sprintf("%s back to full speed", id)
	}
	c.events.emit(Event{Kind: EventSlow, Node: id, Text: text})
	return nil
}

// DropNextReply makes the broker do the client's next data request but
// lose the reply, so the client cannot know it succeeded.
func (c *Cluster) DropNextReply(client string) error {
	if client == "" {
		return fmt.Errorf("%w: drop next reply: name a client", ErrInvalid)
	}
	c.net.DropNext(client, raftnet.DropReply)
	c.events.emit(Event{Kind: EventFaultArmed, Client: client, Text: fmt.Sprintf("the next reply to %s will be lost", client)})
	return nil
}

// DropNextAck loses the client's next ack, delete or offset commit on its
// way to the broker.
func (c *Cluster) DropNextAck(client string) error {
	if client == "" {
		return fmt.Errorf("%w: drop next ack: name a client", ErrInvalid)
	}
	c.net.DropNext(client, raftnet.DropAck)
	c.events.emit(Event{Kind: EventFaultArmed, Client: client, Text: fmt.Sprintf("the next ack from %s will be lost", client)})
	return nil
}

// replicaOn returns the live replica of group on a node, or nil.
func (c *Cluster) replicaOn(nodeID, group string) *replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[nodeID]
	if n == nil || !n.up {
		return nil
	}
	return n.replicas[group]
}

// leaderOf returns the live replica that leads group at the highest term.
// An isolated old leader may still believe it leads; the newer term wins.
func (c *Cluster) leaderOf(group string) *replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	var best *replica
	var bestTerm uint64
	for _, id := range c.nodeIDs {
		n := c.nodes[id]
		if !n.up {
			continue
		}
		rep := n.replicas[group]
		if rep == nil || !rep.isLeader() {
			continue
		}
		if t := rep.raft().CurrentTerm(); best == nil || t > bestTerm {
			best, bestTerm = rep, t
		}
	}
	return best
}

// poll checks cond every few milliseconds until it holds or ctx ends.
func poll(ctx context.Context, cond func() bool) error {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// waitReadyLeader waits until group has a leader that passed its barrier.
func (c *Cluster) waitReadyLeader(ctx context.Context, group string) (*replica, error) {
	var lead *replica
	err := poll(ctx, func() bool {
		lead = c.leaderOf(group)
		return lead != nil && lead.readyLeader()
	})
	if err != nil {
		return nil, fmt.Errorf("%w for %s: %v", ErrNoLeader, group, err)
	}
	return lead, nil
}

// WaitForLeader waits until the partition has a leader ready to serve and
// returns its node.
func (c *Cluster) WaitForLeader(ctx context.Context, tp TopicPartition) (string, error) {
	if _, err := c.topicPartition(tp); err != nil {
		return "", err
	}
	lead, err := c.waitReadyLeader(ctx, tp.String())
	if err != nil {
		return "", err
	}
	return lead.node, nil
}

// Leader returns the node leading the partition now and serving reads (past
// its barrier), or "" if none.
func (c *Cluster) Leader(tp TopicPartition) string {
	if lead := c.leaderOf(tp.String()); lead != nil && lead.readyLeader() {
		return lead.node
	}
	return ""
}

// controllerApply proposes a command to the controller group, following its
// leader until ctx ends.
func (c *Cluster) controllerApply(ctx context.Context, cmd controllerCmd) (controllerResult, error) {
	data, err := json.Marshal(cmd)
	if err != nil {
		return controllerResult{}, err
	}
	retried := false // a proposal before this one may have committed
	for {
		lead, err := c.waitReadyLeader(ctx, controllerGroup)
		if err != nil {
			return controllerResult{}, err
		}
		f := lead.raft().Apply(data, c.timing.RequestTimeout)
		if err := lead.wait(f); err != nil {
			// Not leader: nothing was written. Leadership lost or shut
			// down: it may have been; both commands are safe to repeat
			// (a repeated create is recognised below, a repeated
			// producer id only skips a number).
			if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipTransferInProgress) ||
				errors.Is(err, raft.ErrLeadershipLost) || errors.Is(err, raft.ErrRaftShutdown) {
				retried = true
				continue
			}
			return controllerResult{}, fmt.Errorf("controller: %w", err)
		}
		res := f.Response().(controllerResult)
		if retried && (errors.Is(res.err, ErrTopicExists) || errors.Is(res.err, ErrQueueExists)) {
			return controllerResult{}, nil // our earlier proposal committed after all
		}
		return res, res.err
	}
}

// allocProducerID asks the controller for a new producer id.
func (c *Cluster) allocProducerID(ctx context.Context) (int64, error) {
	res, err := c.controllerApply(ctx, controllerCmd{Op: "alloc-pid"})
	if err != nil {
		return 0, fmt.Errorf("allocate producer id: %w", err)
	}
	c.events.emit(Event{Kind: EventProducerID, Group: controllerGroup, Text: fmt.Sprintf("controller handed out producer id %d", res.pid)})
	return res.pid, nil
}

// CreateTopic creates a topic, starts a raft group per partition on its
// replicas, and waits until every partition has a leader, moving each to its
// preferred replica so leaders spread over the nodes.
func (c *Cluster) CreateTopic(ctx context.Context, cfg TopicConfig) error {
	if IsInternalTopic(cfg.Name) {
		return fmt.Errorf("create topic: %w: %q: names starting with \"__\" are reserved for internal topics such as %s", ErrInvalid, cfg.Name, OffsetsTopic)
	}
	return c.createTopic(ctx, cfg)
}

// createTopic creates any topic, internal ones included.
func (c *Cluster) createTopic(ctx context.Context, cfg TopicConfig) error {
	c.admin.Lock()
	defer c.admin.Unlock()
	if err := c.checkOpen(); err != nil {
		return err
	}
	if cfg.RF == 0 {
		cfg.RF = min(3, len(c.nodeIDs))
	}
	if err := cfg.validate(len(c.nodeIDs)); err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	c.mu.Lock()
	_, exists := c.topics[cfg.Name]
	start := 0
	for _, t := range c.topics {
		if !IsInternalTopic(t.Config.Name) { // internal topics leave user placement as it was
			start += len(t.Placement)
		}
	}
	if IsInternalTopic(cfg.Name) {
		start = len(c.nodeIDs) - 1 // __consumer_offsets/0 prefers the last node, user topics the first
	}
	c.mu.Unlock()
	if exists {
		return fmt.Errorf("create topic: %w: %q", ErrTopicExists, cfg.Name)
	}
	rec := topicRecord{Config: cfg, Placement: place(c.nodeIDs, cfg.Partitions, cfg.RF, start)}
	if _, err := c.controllerApply(ctx, controllerCmd{Op: "create-topic", Topic: &rec}); err != nil {
		return fmt.Errorf("create topic %s: %w", cfg.Name, err)
	}
	c.mu.Lock()
	rec.Seq = len(c.topics)
	c.topics[cfg.Name] = rec
	c.mu.Unlock()
	for p, nodes := range rec.Placement {
		group := TopicPartition{cfg.Name, p}.String()
		var servers []raft.Server
		for _, id := range nodes {
			servers = append(servers, raft.Server{ID: raft.ServerID(id), Address: raftnet.Addr(id, group)})
		}
		for _, id := range nodes {
			c.mu.Lock()
			up := c.nodes[id].up
			c.mu.Unlock()
			if !up {
				continue // it joins when it restarts
			}
			if err := c.startOn(id, group, servers); err != nil {
				return fmt.Errorf("create topic %s: %w", cfg.Name, err)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(rec.Placement))
	for p, nodes := range rec.Placement {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = c.elect(ctx, TopicPartition{cfg.Name, p}.String(), nodes[0], true)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("create topic %s: %w", cfg.Name, err)
	}
	c.events.emit(Event{Kind: EventTopicCreated, Text: fmt.Sprintf("topic %s created: %d partition(s), rf %d", cfg.Name, cfg.Partitions, cfg.RF)})
	return nil
}

func (c *Cluster) topicPartition(tp TopicPartition) (topicRecord, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return topicRecord{}, ErrClosed
	}
	rec, ok := c.topics[tp.Topic]
	if !ok {
		names := make([]string, 0, len(c.topics))
		for n := range c.topics {
			names = append(names, n)
		}
		sort.Strings(names)
		return rec, fmt.Errorf("%w: %q (topics: %s)", ErrUnknownTopic, tp.Topic, strings.Join(names, ", "))
	}
	if tp.Partition < 0 || tp.Partition >= len(rec.Placement) {
		return rec, fmt.Errorf("%w: %s has partitions 0 to %d, not %d", ErrUnknownPartition, tp.Topic, len(rec.Placement)-1, tp.Partition)
	}
	return rec, nil
}

// TransferLeadership moves the partition's leadership to node and waits
// until that node leads and is ready to serve.
func (c *Cluster) TransferLeadership(ctx context.Context, tp TopicPartition, nodeID string) error {
	rec, err := c.topicPartition(tp)
	if err != nil {
		return fmt.Errorf("elect: %w", err)
	}
	if _, err := c.node(nodeID); err != nil {
		return fmt.Errorf("elect: %w", err)
	}
	hosts := rec.Placement[tp.Partition]
	found := false
	for _, h := range hosts {
		found = found || h == nodeID
	}
	if !found {
		return fmt.Errorf("%w: elect %s %s: %s holds no replica of it; its replicas are on %s", ErrInvalid, nodeID, tp, nodeID, strings.Join(hosts, ", "))
	}
	if c.replicaOn(nodeID, tp.String()) == nil {
		return fmt.Errorf("elect %s %s: %w", nodeID, tp, ErrNodeDown)
	}
	return c.elect(ctx, tp.String(), nodeID, false)
}

// elect waits for a leader and, if it is not nodeID, asks it to hand over,
// retrying because a successful transfer only means the old leader stepped
// down, not that the target won. bestEffort gives up quietly once the
// group has some leader.
func (c *Cluster) elect(ctx context.Context, group, nodeID string, bestEffort bool) error {
	round := time.Duration(10) * c.timing.ElectionTimeout
	for attempt := 0; ; attempt++ {
		lead, err := c.waitReadyLeader(ctx, group)
		if err != nil {
			return err
		}
		if lead.node == nodeID {
			return nil
		}
		if bestEffort && (attempt >= 3 || c.replicaOn(nodeID, group) == nil) {
			return nil
		}
		c.events.emit(Event{Kind: EventLeaderTransfer, Node: lead.node, Group: group,
			Text: fmt.Sprintf("%s hands leadership of %s to %s", lead.node, group, nodeID)})
		f := lead.raft().LeadershipTransferToServer(raft.ServerID(nodeID), raftnet.Addr(nodeID, group))
		lead.wait(f) // success only means the old leader stepped down; check who won below
		wctx, cancel := context.WithTimeout(ctx, round)
		_ = poll(wctx, func() bool {
			l := c.leaderOf(group)
			return l != nil && l.readyLeader() && l.node == nodeID
		})
		cancel()
		if ctx.Err() != nil {
			return fmt.Errorf("elect %s for %s: %w", nodeID, group, ctx.Err())
		}
	}
}

// housekeep gives every partition with retention a clock tick now and then,
// so retention runs on idle partitions too. The leader's time goes into the
// raft entry so every replica deletes the same segments.
func (c *Cluster) housekeep() {
	defer c.wg.Done()
	every := max(250*time.Millisecond, c.timing.HeartbeatTimeout)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		c.mu.Lock()
		var groups []string
		for _, rec := range c.topics {
			if rec.Config.RetentionAge == 0 && rec.Config.RetentionBytes == 0 {
				continue
			}
			for p := range rec.Placement {
				groups = append(groups, TopicPartition{rec.Config.Name, p}.String())
			}
		}
		c.mu.Unlock()
		for _, g := range groups {
			if lead := c.leaderOf(g); lead != nil && lead.readyLeader() {
				lead.raft().Apply(encodeTick(c.now().UnixNano()), c.timing.RequestTimeout)
			}
		}
	}
}

var _ io.Writer = eventWriter{}
