package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker/partlog"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// ProducerConfig configures a producer client.
type ProducerConfig struct {
	// ClientID names the client; faults such as a lost reply are armed for it.
	ClientID string
	Acks     Acks
	// Idempotent gives the producer an id from the controller and numbers
	// its batches per partition, so the partition can drop a repeat. Like
	// Kafka, it needs acks=all.
	Idempotent bool
	// BatchSize is the most records one request carries (default 1).
	BatchSize int
	// DeliveryTimeout bounds the time spent retrying one batch (default
	// 10 request timeouts).
	DeliveryTimeout time.Duration
	// RetryBackoff is the first wait before a retry; it doubles up to
	// RetryBackoffMax (defaults: a tenth and a quarter of a heartbeat
	// timeout). Kafka's 100 ms backoff is small beside its failure
	// detection of seconds; a cap of a whole heartbeat timeout would add
	// up to one election timeout to every failover.
	RetryBackoff    time.Duration
	RetryBackoffMax time.Duration
}

// Message is one record to produce.
type Message struct {
	Topic string
	// Partition is used when Pinned; otherwise a keyed message goes to
	// murmur2(key) % partitions, as Kafka's default partitioner does, and an
	// unkeyed one round-robins.
	Partition int
	Pinned    bool
	Key       []byte
	Value     []byte
	MsgID     string
	Timestamp time.Time // zero: the leader's clock
}

// Outcome is what a producer learned about one message.
type Outcome int

const (
	// OutcomeAcked: the broker confirmed the write (acks=1 or all).
	OutcomeAcked Outcome = iota
	// OutcomeSent: acks=0; sent, never confirmed.
	OutcomeSent
	// OutcomeFailed: the broker refused it or it never reached a leader.
	OutcomeFailed
	// OutcomeUnknown: the producer could not learn whether it was written.
	OutcomeUnknown
)

func (o Outcome) String() string {
	return [...]string{"acknowledged", "sent", "failed", "unknown"}[o]
}

// ProduceResult is the fate of one message.
type ProduceResult struct {
	Partition int
	Offset    int64  // -1 when not known
	Epoch     uint64 // the epoch of the leader that wrote it
	Outcome   Outcome
	Err       error // why it failed or is unknown; for acked messages, nil
	Attempts  int   // requests sent for its batch
	Duplicate bool  // the partition recognised a repeat and answered with the original offset
}

// Producer writes to topics, following partition leaders: on a not-leader
// answer or a timeout it refreshes metadata and retries with backoff.
type Producer struct {
	c   *Cluster
	cfg ProducerConfig
	pid int64

	mu    sync.Mutex
	seq   map[TopicPartition]int32
	locks map[TopicPartition]*sync.Mutex // one request in flight per partition keeps order
	rr    map[string]int                 // round-robin position per topic
	meta  int                            // which node to ask for metadata next
	// leaders caches each partition's leader, as a Kafka client keeps its
	// metadata: asked for once, asked again after a request to it fails.
	leaders map[string]string
}

// NewProducer makes a producer client. An idempotent one asks the
// controller for its producer id.
func (c *Cluster) NewProducer(ctx context.Context, cfg ProducerConfig) (*Producer, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	if cfg.ClientID == "" {
		return nil, fmt.Errorf("%w: a producer needs a client id", ErrInvalid)
	}
	if cfg.Acks != AcksNone && cfg.Acks != AcksLeader && cfg.Acks != AcksAll {
		return nil, fmt.Errorf("%w: producer %s: acks must be 0, 1 or all", ErrInvalid, cfg.ClientID)
	}
	if cfg.Idempotent && cfg.Acks != AcksAll {
		return nil, fmt.Errorf("%w: producer %s: an idempotent producer needs acks=all (with acks=%s a write the leader acknowledged can still vanish)", ErrInvalid, cfg.ClientID, cfg.Acks)
	}
	if cfg.BatchSize < 0 || cfg.DeliveryTimeout < 0 || cfg.RetryBackoff < 0 || cfg.RetryBackoffMax < 0 {
		return nil, fmt.Errorf("%w: producer %s: batch size, timeouts and backoffs cannot be negative", ErrInvalid, cfg.ClientID)
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = 1
	}
	if cfg.DeliveryTimeout == 0 {
		cfg.DeliveryTimeout = 10 * c.requestTimeout()
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = c.timing.HeartbeatTimeout / 10
	}
	if cfg.RetryBackoffMax == 0 {
		cfg.RetryBackoffMax = c.timing.HeartbeatTimeout / 4
	}
	p := &Producer{c: c, cfg: cfg, seq: map[TopicPartition]int32{}, locks: map[TopicPartition]*sync.Mutex{}, rr: map[string]int{}}
	if cfg.Idempotent {
		pid, err := c.allocProducerID(ctx)
		if err != nil {
			return nil, fmt.Errorf("producer %s: %w", cfg.ClientID, err)
		}
		p.pid = pid
	}
	return p, nil
}

// ID returns the producer id (0 unless idempotent).
func (p *Producer) ID() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pid
}

// ClientID returns the client's name.
func (p *Producer) ClientID() string { return p.cfg.ClientID }

// Produce sends messages and returns one result per message, in order.
// Messages for one partition go in order, in batches of BatchSize;
// partitions proceed in parallel. Bad input (an unknown topic or
// partition) fails only the messages it concerns.
func (p *Producer) Produce(ctx context.Context, msgs ...Message) []ProduceResult {
	results := make([]ProduceResult, len(msgs))
	groups := p.route(msgs, results)
	send := func(g partMsgs) {
		lock := p.partitionLock(g.tp)
		lock.Lock()
		defer lock.Unlock()
		for start := 0; start < len(g.idx); start += p.cfg.BatchSize {
			chunk := g.idx[start:min(start+p.cfg.BatchSize, len(g.idx))]
			p.sendChunk(ctx, g.tp, msgs, chunk, results)
		}
	}
	if len(groups) == 1 { // one partition, the usual case: no goroutine needed
		send(groups[0])
		return results
	}
	var wg sync.WaitGroup
	for _, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			send(g)
		}()
	}
	wg.Wait()
	return results
}

func (p *Producer) partitionLock(tp TopicPartition) *sync.Mutex {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.locks[tp]
	if l == nil {
		l = &sync.Mutex{}
		p.locks[tp] = l
	}
	return l
}

// partMsgs is the messages of one Produce call bound for one partition: their
// indexes, in order.
type partMsgs struct {
	tp  TopicPartition
	idx []int
}

// route picks every message's partition and groups the messages by
// partition, in the order the partitions first appear; a message that
// cannot be routed gets its failed result here. A call usually names one
// topic and one or a few partitions, so each topic is looked up once per
// call and the groups are a short slice rather than a map; and when every
// message goes to one partition (a batch for one partition, the usual
// case) nothing per message is kept beyond the group's indexes.
func (p *Producer) route(msgs []Message, results []ProduceResult) []partMsgs {
	if groups, ok := p.routePinned(msgs); ok {
		return groups
	}
	var topicBuf [2]topicRoute
	topics := topicBuf[:0]
	var groups []partMsgs
	var countBuf [4]int
	counts := countBuf[:0]
	// Each message's group, -1 if it failed; nil as long as every message
	// so far went to group 0, which the zero values say.
	var where []int32
	for i := range msgs {
		m := &msgs[i]
		t := -1
		for k := range topics {
			if topics[k].name == m.Topic {
				t = k
				break
			}
		}
		if t < 0 {
			topics = append(topics, p.lookupTopic(m.Topic))
			t = len(topics) - 1
		}
		tp, err := p.pick(m, &topics[t])
		if err != nil {
			results[i] = ProduceResult{Partition: m.Partition, Offset: -1, Outcome: OutcomeFailed, Err: err}
			if where == nil {
				where = make([]int32, len(msgs))
			}
			where[i] = -1
			continue
		}
		g := -1
		for k := range groups {
			if groups[k].tp == tp {
				g = k
				break
			}
		}
		if g < 0 {
			groups = append(groups, partMsgs{tp: tp})
			counts = append(counts, 0)
			g = len(groups) - 1
		}
		if g != 0 && where == nil {
			where = make([]int32, len(msgs))
		}
		if where != nil {
			where[i] = int32(g)
		}
		counts[g]++
	}
	if len(groups) == 0 {
		return nil
	}
	// One backing array for every group's indexes.
	total := 0
	for _, n := range counts {
		total += n
	}
	all := make([]int, total)
	if where == nil { // every message went to group 0
		for i := range all {
			all[i] = i
		}
		groups[0].idx = all
		return groups
	}
	for g, n := range counts {
		groups[g].idx, all = all[:0:n], all[n:]
	}
	for i, g := range where {
		if g >= 0 {
			groups[g].idx = append(groups[g].idx, i)
		}
	}
	return groups
}

// routePinned routes a call whose messages are all pinned to one
// partition of one topic, as a batching client's usually are, with one
// check for them all. It reports false for any other call, and for one
// that fails (route then fails each message).
func (p *Producer) routePinned(msgs []Message) ([]partMsgs, bool) {
	if len(msgs) == 0 || !msgs[0].Pinned {
		return nil, false
	}
	topic, part := msgs[0].Topic, msgs[0].Partition
	for i := 1; i < len(msgs); i++ {
		if m := &msgs[i]; !m.Pinned || m.Partition != part || m.Topic != topic {
			return nil, false
		}
	}
	t := p.lookupTopic(topic)
	tp, err := p.pick(&msgs[0], &t)
	if err != nil {
		return nil, false
	}
	idx := make([]int, len(msgs))
	for i := range idx {
		idx[i] = i
	}
	return []partMsgs{{tp: tp, idx: idx}}, true
}

// topicRoute is what routing needs to know about a topic.
type topicRoute struct {
	name       string
	partitions int
	err        error // why the topic takes no produce requests, or nil
}

func (p *Producer) lookupTopic(topic string) topicRoute {
	rec, err := p.c.topicPartition(TopicPartition{Topic: topic})
	if err != nil && !errors.Is(err, ErrUnknownPartition) {
		return topicRoute{name: topic, err: fmt.Errorf("produce: %w", err)}
	}
	if IsInternalTopic(topic) {
		return topicRoute{name: topic, err: fmt.Errorf("produce: %w: %s is internal; only the broker writes to it", ErrInvalid, topic)}
	}
	return topicRoute{name: topic, partitions: len(rec.Placement)}
}

// pick chooses the partition of a message to topic t.
func (p *Producer) pick(m *Message, t *topicRoute) (TopicPartition, error) {
	if t.err != nil {
		return TopicPartition{}, t.err
	}
	n := t.partitions
	tp := TopicPartition{Topic: m.Topic}
	switch {
	case m.Pinned:
		if m.Partition < 0 || m.Partition >= n {
			return tp, fmt.Errorf("produce: %w: %s has partitions 0 to %d, not %d", ErrUnknownPartition, m.Topic, n-1, m.Partition)
		}
		tp.Partition = m.Partition
	case m.Key != nil:
		tp.Partition = partlog.PartitionForKey(m.Key, n)
	default:
		p.mu.Lock()
		tp.Partition = p.rr[m.Topic] % n
		p.rr[m.Topic]++
		p.mu.Unlock()
	}
	return tp, nil
}

// recordBufs recycles the record slices sendChunk builds batches in: the
// leader encodes a batch into its raft entry, so the records are garbage as
// soon as the request returns.
var recordBufs = sync.Pool{New: func() any { return new([]partlog.Record) }}

// sendChunk sends one batch until it has an outcome, and fills results.
func (p *Producer) sendChunk(ctx context.Context, tp TopicPartition, msgs []Message, idx []int, results []ProduceResult) {
	buf := recordBufs.Get().(*[]partlog.Record)
	recs := slices.Grow((*buf)[:0], len(idx))[:len(idx)]
	for k, i := range idx {
		m := &msgs[i]
		var ts int64
		if !m.Timestamp.IsZero() {
			ts = m.Timestamp.UnixNano()
		}
		recs[k] = partlog.Record{Key: m.Key, Value: m.Value, MsgID: m.MsgID, Timestamp: ts}
	}
	b := partlog.Batch{Records: recs}
	p.mu.Lock()
	if p.pid != 0 {
		b.ProducerID, b.BaseSeq = p.pid, p.seq[tp]
		p.seq[tp] += int32(len(idx))
	}
	p.mu.Unlock()
	resp, outcome, attempts, err := p.send(ctx, tp, b)
	if b.ProducerID != 0 && outcome != OutcomeAcked {
		p.recoverSequence(ctx, tp, b, outcome, err)
	}
	clear(recs) // let go of the messages' bytes
	*buf = recs[:0]
	recordBufs.Put(buf)
	for k, i := range idx {
		// Field by field: results[i] is still zero (route fills in only the
		// messages it fails), so a nil Err need not be written at all.
		r := &results[i]
		r.Partition, r.Offset, r.Epoch, r.Outcome, r.Attempts, r.Duplicate = tp.Partition, -1, resp.epoch, outcome, attempts, resp.duplicate
		if outcome == OutcomeAcked && resp.base >= 0 {
			r.Offset = resp.base + int64(k)
		}
		if err != nil {
			r.Err = err
		}
	}
}

// recoverSequence keeps an idempotent producer usable after a batch that
// did not get through. A batch that certainly was not written gives its
// sequence numbers back, so the next batch follows the last one written.
// A batch that may have been written (unknown), or a partition that no
// longer accepts our numbering, leaves no sequence that is certainly next:
// like Kafka's producer after such an error, it starts over under a new
// producer id, its numbering back at zero on every partition.
func (p *Producer) recoverSequence(ctx context.Context, tp TopicPartition, b partlog.Batch, outcome Outcome, err error) {
	if outcome == OutcomeFailed && !errors.Is(err, ErrOutOfOrderSequence) {
		p.mu.Lock()
		if p.pid == b.ProducerID && p.seq[tp] == b.BaseSeq+int32(len(b.Records)) {
			p.seq[tp] = b.BaseSeq // the partition lock keeps later batches out meanwhile
		}
		p.mu.Unlock()
		return
	}
	pid, aerr := p.c.allocProducerID(ctx)
	if aerr != nil {
		return // the next batch meets the same state and tries again
	}
	p.mu.Lock()
	if p.pid == b.ProducerID {
		p.pid, p.seq = pid, map[TopicPartition]int32{}
	}
	p.mu.Unlock()
}

// send is the retry loop of one batch.
func (p *Producer) send(ctx context.Context, tp TopicPartition, b partlog.Batch) (produceResponse, Outcome, int, error) {
	deadline := time.Now().Add(p.cfg.DeliveryTimeout)
	backoff := p.cfg.RetryBackoff
	unknown := false
	group := tp.String()
	for attempt := 1; ; attempt++ {
		var resp produceResponse
		node, err := p.cachedLeader(ctx, group)
		if err == nil {
			err = p.c.net.Call(ctx, p.cfg.ClientID, node, raftnet.RequestData, func() error {
				rep := p.c.replicaOn(node, group)
				if rep == nil {
					return fmt.Errorf("%w: %s has no replica of %s", ErrNotLeader, node, group)
				}
				var e error
				resp, e = rep.produce(b, p.cfg.Acks)
				return e
			})
		}
		if err != nil {
			p.forgetLeader(group, node)
		}
		if p.cfg.Acks == AcksNone {
			return produceResponse{base: -1}, OutcomeSent, attempt, err
		}
		switch {
		case err == nil:
			return resp, OutcomeAcked, attempt, nil
		case errors.Is(err, ErrDuplicateSequence):
			// Older than the partition remembers: it was written before.
			return produceResponse{base: -1, duplicate: true}, OutcomeAcked, attempt, nil
		case errors.Is(err, raftnet.ErrReplyLost), errors.Is(err, ErrUnknownOutcome):
			unknown = true
		case errors.Is(err, ErrNotLeader), errors.Is(err, ErrNoLeader), errors.Is(err, ErrStorage),
			errors.Is(err, raftnet.ErrUnreachable), errors.Is(err, raftnet.ErrRequestLost):
			// nothing was written; try again
		default:
			return resp, p.failed(unknown), attempt, err
		}
		if ctx.Err() != nil || time.Now().Add(backoff).After(deadline) {
			return resp, p.failed(unknown), attempt, fmt.Errorf("produce to %s: gave up after %d attempts: %w", group, attempt, err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		backoff = min(2*backoff, p.cfg.RetryBackoffMax)
	}
}

func (p *Producer) failed(unknown bool) Outcome {
	if unknown {
		return OutcomeUnknown
	}
	return OutcomeFailed
}

// cachedLeader is the node the producer last learned leads group, or
// asks a node when it knows none.
func (p *Producer) cachedLeader(ctx context.Context, group string) (string, error) {
	p.mu.Lock()
	node, ok := p.leaders[group]
	p.mu.Unlock()
	if ok {
		return node, nil
	}
	node, err := p.leaderFor(ctx, group)
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	if p.leaders == nil {
		p.leaders = map[string]string{}
	}
	p.leaders[group] = node
	p.mu.Unlock()
	return node, nil
}

// forgetLeader drops the cached leader of group after a request to node
// failed: the next attempt asks again.
func (p *Producer) forgetLeader(group, node string) {
	p.mu.Lock()
	if p.leaders[group] == node {
		delete(p.leaders, group)
	}
	p.mu.Unlock()
}

// leaderFor asks a reachable node which node leads group.
func (p *Producer) leaderFor(ctx context.Context, group string) (string, error) {
	nodes := p.c.nodeIDs
	p.mu.Lock()
	first := p.meta
	p.meta++
	p.mu.Unlock()
	var last error
	for k := range nodes {
		id := nodes[(first+k)%len(nodes)]
		var lead string
		err := p.c.net.Call(ctx, p.cfg.ClientID, id, raftnet.RequestMetadata, func() error {
			rep := p.c.leaderOf(group)
			if rep == nil {
				return fmt.Errorf("%w for %s", ErrNoLeader, group)
			}
			lead = rep.node
			return nil
		})
		if err == nil {
			return lead, nil
		}
		last = err
		if errors.Is(err, ErrNoLeader) {
			return "", err
		}
	}
	return "", last
}
