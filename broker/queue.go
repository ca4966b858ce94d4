package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mqlab/mqlab/broker/queue"
)

// A work queue is its own raft group, named by the queue ("receipts"), with
// replicas on rf nodes. Its state machine (package queue) holds the
// messages; the controller holds its configuration and placement. The
// queue's leader stamps its clock into every command, so deadlines,
// delays and TTLs are decided alike on every replica and survive failover.

// Errors of queues; each is wrapped with the specifics.
var (
	// ErrUnknownQueue: no queue by that name.
	ErrUnknownQueue = errors.New("unknown queue")
	// ErrQueueExists: a queue (or topic, or exchange) by that name exists.
	ErrQueueExists = errors.New("queue already exists")
	// ErrUnknownExchange: no exchange by that name.
	ErrUnknownExchange = errors.New("unknown exchange")
	// ErrQueueFull: the queue holds its max length and rejected the send
	// (back-pressure): try again once consumers have drained it.
	ErrQueueFull = queue.ErrFull
	// ErrUnknownReceipt: the receipt handle names no message in the queue:
	// acked, expired or moved on, or never handed out.
	ErrUnknownReceipt = queue.ErrUnknownReceipt
	// ErrStaleReceipt: the receipt belongs to an earlier delivery; the
	// message's visibility timeout ran out and it is back in the queue or
	// with another consumer.
	ErrStaleReceipt = queue.ErrStaleReceipt
	// ErrNoDLQ: the queue has no dead-letter queue.
	ErrNoDLQ = queue.ErrNoDLQ
)

// DefaultVisibility is a queue's visibility timeout unless its config
// says otherwise: long enough to watch, short enough to wait for.
const DefaultVisibility = 5 * time.Second

// MaxReceiveWait bounds a receive's long poll, as SQS does.
const MaxReceiveWait = 20 * time.Second

// QueueConfig describes a work queue.
type QueueConfig struct {
	Name string `json:"name"`
	RF   int    `json:"rf"` // replicas; 0 means min(3, nodes)
	// Visibility is how long a received message stays invisible to other
	// consumers unless acked; a receive may ask for its own. 0 means
	// DefaultVisibility.
	Visibility time.Duration `json:"visibility"`
	// MaxReceives moves a message to DLQ once it has been received that
	// many times without an ack; 0 never does. It needs a DLQ.
	MaxReceives int `json:"max_receives,omitempty"`
	// DLQ names the dead-letter queue; CreateQueue creates it if missing.
	DLQ string `json:"dlq,omitempty"`
	// MaxLength bounds the messages the queue holds (ready, in flight,
	// delayed). 0: unbounded.
	MaxLength int `json:"max_length,omitempty"`
	// Overflow is what a send to a full queue does: queue.OverflowReject
	// ("" too) or queue.OverflowDropHead.
	Overflow string `json:"overflow,omitempty"`
	// TTL drops messages that waited that long since they entered the
	// queue; they are counted as expired and never delivered. 0: none.
	TTL time.Duration `json:"ttl,omitempty"`
	// FIFO delivers each message group in the order sent, none of a group
	// while one of its messages is in flight, and drops a send that
	// repeats a deduplication id within five minutes, as SQS's FIFO
	// queues do.
	FIFO bool `json:"fifo,omitempty"`
}

func (q QueueConfig) stateConfig() queue.Config {
	return queue.Config{Name: q.Name, Visibility: q.Visibility, MaxReceives: q.MaxReceives, DLQ: q.DLQ, MaxLength: q.MaxLength, Overflow: q.Overflow, TTL: q.TTL, FIFO: q.FIFO}
}

func (q QueueConfig) validate(nodes int) error {
	if err := checkQueueName("queue", q.Name); err != nil {
		return err
	}
	if q.RF < 1 || q.RF > nodes {
		return fmt.Errorf("%w: queue %s: rf=%d; want 1 to %d (the cluster has %d nodes)", ErrInvalid, q.Name, q.RF, nodes, nodes)
	}
	if q.Visibility < 0 || q.Visibility > queue.MaxVisibility {
		return fmt.Errorf("%w: queue %s: visibility %v; want 0 to %v", ErrInvalid, q.Name, q.Visibility, queue.MaxVisibility)
	}
	if q.TTL < 0 {
		return fmt.Errorf("%w: queue %s: ttl %v is negative", ErrInvalid, q.Name, q.TTL)
	}
	if q.MaxLength < 0 {
		return fmt.Errorf("%w: queue %s: max-length %d is negative", ErrInvalid, q.Name, q.MaxLength)
	}
	switch q.Overflow {
	case "", queue.OverflowReject, queue.OverflowDropHead:
	default:
		return fmt.Errorf("%w: queue %s: overflow %q; want %s or %s", ErrInvalid, q.Name, q.Overflow, queue.OverflowReject, queue.OverflowDropHead)
	}
	if q.Overflow != "" && q.MaxLength == 0 {
		return fmt.Errorf("%w: queue %s: overflow=%s needs a max-length to overflow", ErrInvalid, q.Name, q.Overflow)
	}
	if q.MaxReceives < 0 {
		return fmt.Errorf("%w: queue %s: max-receives %d is negative", ErrInvalid, q.Name, q.MaxReceives)
	}
	if q.DLQ == q.Name {
		return fmt.Errorf("%w: queue %s cannot be its own dead-letter queue: a message that keeps failing would come straight back", ErrInvalid, q.Name)
	}
	if q.DLQ != "" {
		if err := checkQueueName("dead-letter queue", q.DLQ); err != nil {
			return err
		}
	}
	if q.MaxReceives > 0 && q.DLQ == "" {
		return fmt.Errorf("%w: queue %s: max-receives=%d needs dlq=NAME, somewhere for the messages that fail %d times to go", ErrInvalid, q.Name, q.MaxReceives, q.MaxReceives)
	}
	return nil
}

func checkQueueName(what, name string) error {
	if !topicName.MatchString(name) {
		return fmt.Errorf("%w: %s name %q: use 1–64 letters, digits, '.', '_' or '-'", ErrInvalid, what, name)
	}
	if name == controllerGroup {
		return fmt.Errorf("%w: %s name %q is taken by the controller", ErrInvalid, what, name)
	}
	return nil
}

// queueRecord is a queue as the controller keeps it.
type queueRecord struct {
	Config   QueueConfig `json:"config"`
	Replicas []string    `json:"replicas"` // preferred leader first
	Seq      int         `json:"seq"`      // creation order
}

// bindRecord names an exchange, and for "bind-queue" a queue to bind.
type bindRecord struct {
	Exchange string `json:"exchange"`
	Queue    string `json:"queue,omitempty"`
}

// queueMeta is the controller's part about queues and exchanges.
type queueMeta struct {
	Queues    map[string]queueRecord `json:"queues,omitempty"`
	Exchanges map[string][]string    `json:"exchanges,omitempty"` // exchange → bound queues
	// NextSeq numbers the next queue created. Queues can be deleted, so
	// their count is not a fresh number.
	NextSeq int `json:"next_seq,omitempty"`
}

// nextSeq hands out the next creation number.
func (m *queueMeta) nextSeq() int {
	n := max(m.NextSeq, len(m.Queues))
	m.NextSeq = n + 1
	return n
}

// applyQueueOp is the controller state machine's handling of queue and
// exchange metadata. The caller holds the controller's lock.
func (st *controllerState) applyQueueOp(cmd controllerCmd) controllerResult {
	m := &st.Queues
	if m.Queues == nil {
		m.Queues = map[string]queueRecord{}
	}
	if m.Exchanges == nil {
		m.Exchanges = map[string][]string{}
	}
	switch cmd.Op {
	case "create-queue":
		if cmd.Queue == nil {
			return controllerResult{err: fmt.Errorf("create-queue without a queue")}
		}
		rec := *cmd.Queue
		if _, ok := m.Queues[rec.Config.Name]; ok {
			return controllerResult{err: fmt.Errorf("%w: %q", ErrQueueExists, rec.Config.Name)}
		}
		rec.Seq = m.nextSeq()
		m.Queues[rec.Config.Name] = rec
	case "delete-queue":
		if cmd.Queue == nil {
			return controllerResult{err: fmt.Errorf("delete-queue without a queue")}
		}
		name := cmd.Queue.Config.Name
		if _, ok := m.Queues[name]; !ok {
			return controllerResult{err: fmt.Errorf("%w: %q", ErrUnknownQueue, name)}
		}
		delete(m.Queues, name)
		for ex, bound := range m.Exchanges {
			m.Exchanges[ex] = slices.DeleteFunc(bound, func(q string) bool { return q == name })
		}
	case "create-exchange":
		if cmd.Bind == nil {
			return controllerResult{err: fmt.Errorf("create-exchange without a name")}
		}
		if _, ok := m.Exchanges[cmd.Bind.Exchange]; ok {
			return controllerResult{err: fmt.Errorf("%w: exchange %q", ErrQueueExists, cmd.Bind.Exchange)}
		}
		m.Exchanges[cmd.Bind.Exchange] = []string{}
	case "bind-queue":
		if cmd.Bind == nil {
			return controllerResult{err: fmt.Errorf("bind-queue without a binding")}
		}
		bound, ok := m.Exchanges[cmd.Bind.Exchange]
		if !ok {
			return controllerResult{err: fmt.Errorf("%w: %q", ErrUnknownExchange, cmd.Bind.Exchange)}
		}
		if _, ok := m.Queues[cmd.Bind.Queue]; !ok {
			return controllerResult{err: fmt.Errorf("%w: %q", ErrUnknownQueue, cmd.Bind.Queue)}
		}
		if !slices.Contains(bound, cmd.Bind.Queue) {
			m.Exchanges[cmd.Bind.Exchange] = append(bound, cmd.Bind.Queue)
		}
	}
	return controllerResult{}
}

// queueRegistry is the cluster's copy of queue and exchange metadata, like
// its topics map. Guarded by Cluster.mu.
type queueRegistry struct {
	queues    map[string]queueRecord
	exchanges map[string][]string
	nextSeq   int // see queueMeta.NextSeq
}

func (c *Cluster) queueRecordOf(name string) (queueRecord, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec, ok := c.queues.queues[name]
	return rec, ok
}

// lookupQueue returns a queue's record or a clear error naming the queues
// there are.
func (c *Cluster) lookupQueue(name string) (queueRecord, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return queueRecord{}, ErrClosed
	}
	rec, ok := c.queues.queues[name]
	if !ok {
		names := make([]string, 0, len(c.queues.queues))
		for n := range c.queues.queues {
			names = append(names, n)
		}
		sort.Strings(names)
		have := "there are no queues"
		if len(names) > 0 {
			have = "queues: " + strings.Join(names, ", ")
		}
		return rec, fmt.Errorf("%w: %q (%s)", ErrUnknownQueue, name, have)
	}
	return rec, nil
}

// queuesLocked lists the queues in creation order. c.mu must be held.
func (c *Cluster) queuesLocked() []queueRecord {
	out := make([]queueRecord, 0, len(c.queues.queues))
	for _, q := range c.queues.queues {
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// queueGroupsOnLocked lists the queues with a replica on node. c.mu must
// be held.
func (c *Cluster) queueGroupsOnLocked(nodeID string) []string {
	var out []string
	for _, q := range c.queuesLocked() {
		if slices.Contains(q.Replicas, nodeID) {
			out = append(out, q.Config.Name)
		}
	}
	return out
}

// newQueueFSM builds a queue replica's state machine.
func (c *Cluster) newQueueFSM(rep *replica) (*queueFSM, error) {
	rec, ok := c.queueRecordOf(rep.group)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownQueue, rep.group)
	}
	emitted, _ := c.queueEmitted.LoadOrStore(queueIncarnation{rec.Config.Name, rec.Seq}, new(atomic.Uint64))
	return &queueFSM{rep: rep, emitted: emitted.(*atomic.Uint64), q: queue.New(rec.Config.stateConfig()), changed: make(chan struct{})}, nil
}

// queueIncarnation tells a queue from one created later under its name.
type queueIncarnation struct {
	name string
	seq  int
}

// nameTakenLocked says what already uses name, if anything. c.mu must be
// held.
func (c *Cluster) nameTakenLocked(name string) string {
	if _, ok := c.queues.queues[name]; ok {
		return "a queue"
	}
	if _, ok := c.queues.exchanges[name]; ok {
		return "an exchange"
	}
	if _, ok := c.topics[name]; ok {
		return "a topic"
	}
	return ""
}

// CreateQueue creates a work queue: a raft group with replicas on cfg.RF
// nodes, its leader moved to the preferred replica so leaders spread. A
// missing dead-letter queue is created first, with the same rf and
// visibility. It returns once the queue has a leader.
func (c *Cluster) CreateQueue(ctx context.Context, cfg QueueConfig) error {
	c.admin.Lock()
	defer c.admin.Unlock()
	if err := c.checkOpen(); err != nil {
		return err
	}
	if cfg.RF == 0 {
		cfg.RF = c.defaultRF()
	}
	if cfg.Visibility == 0 {
		cfg.Visibility = DefaultVisibility
	}
	if err := cfg.validate(len(c.nodeIDs)); err != nil {
		return fmt.Errorf("create queue: %w", err)
	}
	c.mu.Lock()
	taken := c.nameTakenLocked(cfg.Name)
	_, dlqExists := c.queues.queues[cfg.DLQ]
	dlqTaken := ""
	if cfg.DLQ != "" && !dlqExists {
		dlqTaken = c.nameTakenLocked(cfg.DLQ)
	}
	c.mu.Unlock()
	if taken != "" {
		return fmt.Errorf("create queue: %w: %q is already %s", ErrQueueExists, cfg.Name, taken)
	}
	if dlqTaken != "" {
		return fmt.Errorf("create queue %s: %w: dead-letter queue %q is already %s, not a queue", cfg.Name, ErrInvalid, cfg.DLQ, dlqTaken)
	}
	if cfg.DLQ != "" && !dlqExists {
		dlq := QueueConfig{Name: cfg.DLQ, RF: cfg.RF, Visibility: cfg.Visibility}
		if err := c.createQueueLocked(ctx, dlq); err != nil {
			return fmt.Errorf("create dead-letter queue of %s: %w", cfg.Name, err)
		}
	}
	return c.createQueueLocked(ctx, cfg)
}

// createQueueLocked does the work of CreateQueue; c.admin is held.
func (c *Cluster) createQueueLocked(ctx context.Context, cfg QueueConfig) error {
	c.mu.Lock()
	start := len(c.queues.queues)
	for _, t := range c.topics {
		start += len(t.Placement)
	}
	c.mu.Unlock()
	rec := queueRecord{Config: cfg, Replicas: place(c.nodeIDs, 1, cfg.RF, start)[0]}
	if _, err := c.controllerApply(ctx, controllerCmd{Op: "create-queue", Queue: &rec}); err != nil {
		return fmt.Errorf("create queue %s: %w", cfg.Name, err)
	}
	c.mu.Lock()
	if c.queues.queues == nil {
		c.queues.queues = map[string]queueRecord{}
	}
	rec.Seq = max(c.queues.nextSeq, len(c.queues.queues))
	c.queues.nextSeq = rec.Seq + 1
	c.queues.queues[cfg.Name] = rec
	c.mu.Unlock()
	if err := c.startGroup(raftGroup{cfg.Name, kindQueue}, rec.Replicas); err != nil {
		return fmt.Errorf("create queue %s: %w", cfg.Name, err)
	}
	c.wg.Add(1)
	go c.keepQueue(cfg.Name, rec.Seq)
	if err := c.elect(ctx, cfg.Name, rec.Replicas[0], true); err != nil {
		return fmt.Errorf("create queue %s: %w", cfg.Name, err)
	}
	text := fmt.Sprintf("queue %s created: rf %d, visibility %v", cfg.Name, cfg.RF, cfg.Visibility)
	if cfg.FIFO {
		text = fmt.Sprintf("FIFO queue %s created: rf %d, visibility %v, each group in order", cfg.Name, cfg.RF, cfg.Visibility)
	}
	if cfg.DLQ != "" {
		text += fmt.Sprintf(", dead-letter queue %s", cfg.DLQ)
		if cfg.MaxReceives > 0 {
			text += fmt.Sprintf(" after %d receives", cfg.MaxReceives)
		}
	}
	if cfg.MaxLength > 0 {
		text += fmt.Sprintf(", max length %d", cfg.MaxLength)
		if cfg.Overflow == queue.OverflowDropHead {
			text += " (then the oldest ready message is dropped)"
		} else {
			text += " (then sends are rejected)"
		}
	}
	if cfg.TTL > 0 {
		text += fmt.Sprintf(", ttl %v", cfg.TTL)
	}
	c.events.emit(Event{Kind: EventQueueCreated, Group: cfg.Name, Text: text})
	return nil
}

// QueueLeader returns the node leading the queue now, or "" if none.
func (c *Cluster) QueueLeader(name string) string {
	if lead := c.leaderOf(name); lead != nil && lead.queue() != nil {
		return lead.node
	}
	return ""
}

// WaitForQueueLeader waits until the queue has a leader ready to serve and
// returns its node.
func (c *Cluster) WaitForQueueLeader(ctx context.Context, name string) (string, error) {
	if _, err := c.lookupQueue(name); err != nil {
		return "", err
	}
	lead, err := c.waitReadyLeader(ctx, name)
	if err != nil {
		return "", err
	}
	return lead.node, nil
}

// TransferQueueLeadership moves the queue's leadership to node and waits
// until that node leads and is ready to serve.
func (c *Cluster) TransferQueueLeadership(ctx context.Context, name, nodeID string) error {
	rec, err := c.lookupQueue(name)
	if err != nil {
		return fmt.Errorf("elect: %w", err)
	}
	if _, err := c.node(nodeID); err != nil {
		return fmt.Errorf("elect: %w", err)
	}
	if !slices.Contains(rec.Replicas, nodeID) {
		return fmt.Errorf("%w: elect %s %s: %s holds no replica of it; its replicas are on %s", ErrInvalid, nodeID, name, nodeID, strings.Join(rec.Replicas, ", "))
	}
	if c.replicaOn(nodeID, name) == nil {
		return fmt.Errorf("elect %s %s: %w", nodeID, name, ErrNodeDown)
	}
	return c.elect(ctx, name, nodeID, false)
}

// applyOnQueueLeader proposes a command on the queue's leader from inside
// the broker (not on a client's behalf), following leadership until ctx
// ends.
func (c *Cluster) applyOnQueueLeader(ctx context.Context, name string, cmd queue.Command) (queue.Result, error) {
	for {
		lead, err := c.waitReadyLeader(ctx, name)
		if err != nil {
			return queue.Result{}, err
		}
		res, err := lead.queueApply(cmd)
		if errors.Is(err, ErrNotLeader) {
			continue
		}
		if err == nil {
			err = res.Err
		}
		return res, err
	}
}

// DeleteQueue deletes a work queue as SQS's DeleteQueue does: the
// messages it holds are dropped (each counted as dropped, never delivered
// again), its raft group stops on every node, its replicas' disks are
// cleared, the exchanges bound to it forget it, and its name is free for
// a new queue. by names who asked, for the timeline. It returns how many
// messages were dropped.
//
// A queue that is another queue's dead-letter queue is refused while that
// queue exists: the messages failing there would have nowhere to go.
// Messages already on their way out (to this queue's dead-letter queue)
// arrive there first.
func (c *Cluster) DeleteQueue(ctx context.Context, name, by string) (int, error) {
	c.admin.Lock()
	defer c.admin.Unlock()
	rec, err := c.lookupQueue(name)
	if err != nil {
		return 0, fmt.Errorf("delete queue: %w", err)
	}
	if src := c.dlqSources(name); len(src) > 0 {
		return 0, fmt.Errorf("%w: delete queue %s: it is the dead-letter queue of %s; delete %s first, or the messages failing there would have nowhere to go",
			ErrInvalid, name, strings.Join(src, ", "), strings.Join(src, ", "))
	}
	if by == "" {
		by = "a client"
	}
	// Drop what it holds on every replica alike, through its raft log.
	res, err := c.applyOnQueueLeader(ctx, name, queue.Command{Op: queue.OpPurge, Consumer: by + " deleting the queue"})
	if err != nil {
		return 0, fmt.Errorf("delete queue %s: %w", name, err)
	}
	dropped := 0
	for _, ch := range res.Changes {
		if ch.Kind == queue.ChDropped {
			dropped++
		}
	}
	// A message already moving to the dead-letter queue is not dropped:
	// wait until the keeper has handed it over.
	err = poll(ctx, func() bool {
		lead := c.leaderOf(name)
		return lead != nil && lead.queue() != nil && len(lead.queue().outbox()) == 0
	})
	if err != nil {
		return dropped, fmt.Errorf("delete queue %s: messages on their way to %s have not arrived: %w", name, rec.Config.DLQ, err)
	}
	if _, err := c.controllerApply(ctx, controllerCmd{Op: "delete-queue", Queue: &rec}); err != nil {
		return dropped, fmt.Errorf("delete queue %s: %w", name, err)
	}
	c.mu.Lock()
	delete(c.queues.queues, name)
	for ex, bound := range c.queues.exchanges {
		c.queues.exchanges[ex] = slices.DeleteFunc(bound, func(q string) bool { return q == name })
	}
	var reps []*replica
	for _, n := range c.nodes {
		if r := n.replicas[name]; r != nil {
			reps = append(reps, r)
			delete(n.replicas, name)
		}
		// A node that is down loses its copy too, as the controller
		// would have it drop on restart a replica it no longer places.
		delete(n.disks, name)
	}
	c.mu.Unlock()
	shutdownAll(reps)
	text := fmt.Sprintf("queue %s deleted by %s", name, by)
	if dropped > 0 {
		text += fmt.Sprintf(": the %d message(s) it held are dropped and will never be delivered", dropped)
	}
	c.events.emit(Event{Kind: EventQueueDeleted, Group: name, Text: text})
	return dropped, nil
}
