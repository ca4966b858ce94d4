package broker

// A cluster's life: its configuration, starting its nodes and their
// controller group, the raft settings every replica shares, the
// housekeeping that ticks retention, and Close.

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/disk"
	"github.com/mqlab/mqlab/broker/partcmd"
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
	// follows the timing preset (1 s fast, 10 s classroom).
	SessionTimeout time.Duration
	// RaftPace is the pace raft starts at, as SetRaftPace would set it
	// (zero is 1, the preset's own).
	RaftPace float64
	// DataDir, when set, is the folder where every replica writes its
	// partitions' segment files, as Kafka lays them out (see
	// PartitionDir). The cluster empties its node folders (n1…n9) there
	// when it starts and leaves them when it closes.
	DataDir string
}

// Cluster is a set of broker nodes in one process.
type Cluster struct {
	timing  Timing
	dataDir string
	now     func() time.Time
	// sessions is what group sessions and rebalance deadlines count in.
	sessions *sessionClock
	// queueEmitted is, for each queue (by name and creation), the highest
	// raft index whose changes an apply has reported (see queueFSM.Apply).
	queueEmitted sync.Map // queueIncarnation → *atomic.Uint64
	net          *raftnet.Network
	events       *eventBus
	logger       hclog.Logger

	admin sync.Mutex // serialises kill, restart, topic creation and close

	mu      sync.Mutex
	nodeIDs []string
	nodes   map[string]*node
	topics  map[string]topicRecord
	queues  queueRegistry // queues and exchanges
	groups  *groupService // consumer group coordinators
	closed  bool

	watchSeq uint64
	watchers map[uint64]func(node string, up bool) // see WatchNodes

	reqID    atomic.Uint64
	filesOff atomic.Bool   // see ReleaseDataDir
	diskFull sync.Map      // node → error its segment file writes fail with (LogFiles.FailWrites)
	pace     atomic.Uint64 // float64 bits: raft's timeouts over the preset's (see SetRaftPace); 0 is 1
	stop     chan struct{}
	wg       sync.WaitGroup // housekeeping and request goroutines
}

type node struct {
	id       string
	up       bool
	disks    map[string]*disk.Disk // survives Kill
	replicas map[string]*replica   // gone on Kill
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
	if err := clearDataDir(cfg.DataDir); err != nil {
		return nil, err
	}
	c := &Cluster{
		timing:   cfg.Timing,
		dataDir:  cfg.DataDir,
		now:      cfg.Now,
		sessions: newSessionClock(cfg.Now),
		events:   newEventBus(cfg.Now),
		nodes:    map[string]*node{},
		topics:   map[string]topicRecord{},
		stop:     make(chan struct{}),
	}
	if cfg.RaftPace != 0 {
		if err := c.validPace(cfg.RaftPace); err != nil {
			return nil, err
		}
		c.pace.Store(math.Float64bits(cfg.RaftPace))
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
		c.nodes[id] = &node{id: id, up: true, disks: map[string]*disk.Disk{}, replicas: map[string]*replica{}}
		servers = append(servers, raft.Server{ID: raft.ServerID(id), Address: raftnet.Addr(id, controllerGroup)})
	}
	for _, id := range c.nodeIDs {
		if err := c.startOn(id, raftGroup{controllerGroup, kindController}, servers); err != nil {
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
	conf.HeartbeatTimeout = c.paced(c.timing.HeartbeatTimeout)
	conf.ElectionTimeout = c.paced(c.timing.ElectionTimeout)
	conf.LeaderLeaseTimeout = c.leaderLease()
	conf.CommitTimeout = c.timing.CommitTimeout
	conf.SnapshotInterval = c.timing.SnapshotInterval
	conf.SnapshotThreshold = c.timing.SnapshotThreshold
	conf.TrailingLogs = c.timing.TrailingLogs
	conf.Logger = c.logger
	conf.NoLegacyTelemetry = true
	return conf
}

// startGroup starts a new raft group — a partition or a queue — on each
// of its replicas' nodes that is up; a node that is down joins when it
// restarts.
func (c *Cluster) startGroup(g raftGroup, replicas []string) error {
	group := g.name
	var servers []raft.Server
	for _, id := range replicas {
		servers = append(servers, raft.Server{ID: raft.ServerID(id), Address: raftnet.Addr(id, group)})
	}
	for _, id := range replicas {
		c.mu.Lock()
		up := c.nodes[id].up
		c.mu.Unlock()
		if !up {
			continue
		}
		if err := c.startOn(id, g, servers); err != nil {
			return err
		}
	}
	return nil
}

// startOn starts the replica of group on a live node from its disk.
func (c *Cluster) startOn(nodeID string, g raftGroup, servers []raft.Server) error {
	group := g.name
	c.mu.Lock()
	n := c.nodes[nodeID]
	d := n.disks[group]
	if d == nil {
		d = disk.New()
		n.disks[group] = d
	}
	c.mu.Unlock()
	rep, err := c.startReplica(nodeID, g, d, servers)
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

// defaultRF is the replication factor of a topic or queue created without
// one: three replicas, or every node of a smaller cluster.
func (c *Cluster) defaultRF() int { return min(3, len(c.nodeIDs)) }

// housekeep gives every partition with retention a clock tick now and then,
// so retention runs on idle partitions too, and starts a compaction pass
// on a compacted partition whose leader finds it dirty enough. The
// leader's time goes into the raft entry so every replica deletes the
// same segments and cleans the same log.
func (c *Cluster) housekeep() {
	defer c.wg.Done()
	every := max(250*time.Millisecond, c.timing.HeartbeatTimeout)
	t := time.NewTicker(every)
	defer t.Stop()
	type chore struct {
		group string
		tick  bool    // retention
		ratio float64 // compaction, when clean is set
		clean bool
	}
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		c.mu.Lock()
		var chores []chore
		for _, rec := range c.topics {
			tick := rec.Config.RetentionAge != 0 || rec.Config.RetentionBytes != 0
			clean := rec.Config.Compacted() && !rec.Config.ManualCleaner
			if !tick && !clean {
				continue
			}
			for p := range rec.Placement {
				chores = append(chores, chore{TopicPartition{rec.Config.Name, p}.String(), tick, rec.Config.DirtyRatio, clean})
			}
		}
		c.mu.Unlock()
		for _, ch := range chores {
			lead := c.leaderOf(ch.group)
			if lead == nil || !lead.readyLeader() {
				continue
			}
			if ch.clean && lead.dirty(ch.ratio) {
				// Waited for, so the next round sees the log it cleaned
				// and does not propose the same pass again.
				lead.compact() // a failure: the next round tries again
			} else if ch.tick {
				lead.raft().Apply(partcmd.EncodeTick(c.now().UnixNano()), c.requestTimeout())
			}
		}
	}
}

var _ io.Writer = eventWriter{}
