package broker

import (
	"context"
	"errors"
	"fmt"
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
	// RetryBackoffMax (defaults: a tenth and one heartbeat timeout).
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
		cfg.DeliveryTimeout = 10 * c.timing.RequestTimeout
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = c.timing.HeartbeatTimeout / 10
	}
	if cfg.RetryBackoffMax == 0 {
		cfg.RetryBackoffMax = c.timing.HeartbeatTimeout
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
func (p *Producer) ID() int64 { return p.pid }

// ClientID returns the client's name.
func (p *Producer) ClientID() string { return p.cfg.ClientID }

// Produce sends messages and returns one result per message, in order.
// Messages for one partition go in order, in batches of BatchSize;
// partitions proceed in parallel. Bad input (an unknown topic or
// partition) fails only the messages it concerns.
func (p *Producer) Produce(ctx context.Context, msgs ...Message) []ProduceResult {
	results := make([]ProduceResult, len(msgs))
	byPart := map[TopicPartition][]int{}
	var order []TopicPartition
	for i, m := range msgs {
		tp, err := p.route(m)
		if err != nil {
			results[i] = ProduceResult{Partition: m.Partition, Offset: -1, Outcome: OutcomeFailed, Err: err}
			continue
		}
		if _, ok := byPart[tp]; !ok {
			order = append(order, tp)
		}
		byPart[tp] = append(byPart[tp], i)
	}
	var wg sync.WaitGroup
	for _, tp := range order {
		idx := byPart[tp]
		wg.Add(1)
		go func() {
			defer wg.Done()
			lock := p.partitionLock(tp)
			lock.Lock()
			defer lock.Unlock()
			for start := 0; start < len(idx); start += p.cfg.BatchSize {
				chunk := idx[start:min(start+p.cfg.BatchSize, len(idx))]
				p.sendChunk(ctx, tp, msgs, chunk, results)
			}
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

// route picks the message's partition.
func (p *Producer) route(m Message) (TopicPartition, error) {
	rec, err := p.c.topicPartition(TopicPartition{Topic: m.Topic})
	if err != nil && !errors.Is(err, ErrUnknownPartition) {
		return TopicPartition{}, fmt.Errorf("produce: %w", err)
	}
	n := len(rec.Placement)
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

// sendChunk sends one batch until it has an outcome, and fills results.
func (p *Producer) sendChunk(ctx context.Context, tp TopicPartition, msgs []Message, idx []int, results []ProduceResult) {
	b := partlog.Batch{ProducerID: p.pid, Records: make([]partlog.Record, len(idx))}
	for k, i := range idx {
		m := msgs[i]
		b.Records[k] = partlog.Record{Key: m.Key, Value: m.Value, MsgID: m.MsgID}
		if !m.Timestamp.IsZero() {
			b.Records[k].Timestamp = m.Timestamp.UnixNano()
		}
	}
	if p.pid != 0 {
		p.mu.Lock()
		b.BaseSeq = p.seq[tp]
		p.seq[tp] += int32(len(idx))
		p.mu.Unlock()
	}
	resp, outcome, attempts, err := p.send(ctx, tp, b)
	for k, i := range idx {
		r := ProduceResult{Partition: tp.Partition, Offset: -1, Outcome: outcome, Err: err, Attempts: attempts, Duplicate: resp.duplicate, Epoch: resp.epoch}
		if outcome == OutcomeAcked && resp.base >= 0 {
			r.Offset = resp.base + int64(k)
		}
		results[i] = r
	}
}

// send is the retry loop of one batch.
func (p *Producer) send(ctx context.Context, tp TopicPartition, b partlog.Batch) (produceResponse, Outcome, int, error) {
	deadline := time.Now().Add(p.cfg.DeliveryTimeout)
	backoff := p.cfg.RetryBackoff
	unknown := false
	group := tp.String()
	for attempt := 1; ; attempt++ {
		var resp produceResponse
		node, err := p.leaderFor(ctx, group)
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
		case errors.Is(err, ErrNotLeader), errors.Is(err, ErrNoLeader),
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
