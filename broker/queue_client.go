package broker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqlab/mqlab/broker/queue"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// QueueClientConfig configures a queue client: a sender, a worker, or both.
type QueueClientConfig struct {
	// ClientID names the client; it is the consumer name receives record
	// and the prefix of the message ids it makes. Faults such as a lost
	// reply are armed for it.
	ClientID string
	// Prefetch is the most messages this client may hold in flight at once
	// (received, not yet acked, nacked or timed out); 0 for no limit.
	Prefetch int
	// DeliveryTimeout bounds the time spent retrying one send (default 10
	// request timeouts).
	DeliveryTimeout time.Duration
	// RetryBackoff is the first wait before a retry; it doubles up to
	// RetryBackoffMax (defaults: a tenth and one heartbeat timeout).
	RetryBackoff    time.Duration
	RetryBackoffMax time.Duration
	// Via, when set, is the node the client's requests reach: each crosses
	// the network to Via (its faults apply: down, isolated, slowed, an
	// armed drop), and Via forwards it to the queue's leader over the
	// peer link, as a node of a protocol front end does. "" sends each
	// request straight to the leader.
	Via string
	// Once makes every call a single attempt: the caller retries, as an
	// outside client behind a protocol front end does, so a lost reply
	// reaches it as a lost reply.
	Once bool
}

// QueueClient sends to and receives from work queues through the fault
// network, following queue leaders. It is safe for concurrent use.
type QueueClient struct {
	c   *Cluster
	cfg QueueClientConfig
	seq atomic.Uint64
}

// QueueMessage is one message to send.
type QueueMessage struct {
	Body       []byte
	Attributes map[string]string
	// Delay keeps the message invisible this long after it is accepted.
	Delay time.Duration
	// MsgID travels with the message; empty means the client's name and
	// its next sequence number ("worker-1-7"). A retry keeps it.
	MsgID string
	// Group and DedupeID are for FIFO queues: the message group it is
	// delivered in order within, and the id by which a repeat within five
	// minutes is dropped (empty: none).
	Group    string
	DedupeID string
}

// SendResult is the fate of one sent message.
type SendResult struct {
	MsgID string
	// Seq is the message's number in the queue (0 unless acknowledged).
	Seq uint64
	// Outcome: OutcomeAcked (the queue holds it, replicated), OutcomeFailed
	// (refused — Rejected and ErrQueueFull when the queue is full — or it
	// never reached a leader), OutcomeUnknown (a lost reply or leadership
	// change left it open; it may be in the queue).
	Outcome  Outcome
	Err      error
	Attempts int
	// Rejected: the queue was full (back-pressure). Counted by the queue
	// as rejected, never as sent.
	Rejected bool
	// Duplicate: a FIFO queue dropped it as a repeat of a deduplication
	// id it holds; Seq and MsgID are the original message's.
	Duplicate bool
}

// Delivery is a received message.
type Delivery struct {
	Queue         string
	Seq           uint64 // its number in the queue
	MsgID         string
	Body          []byte
	Attributes    map[string]string
	ReceiptHandle string // settles this delivery: Ack, Nack, ChangeVisibility, DeadLetter
	ReceiveCount  int    // 1 the first time; more means it was delivered before and not acked
	SentAt        time.Time
	EnqueuedAt    time.Time // when it entered this queue
	ReceivedAt    time.Time // the leader's clock at this delivery
	Deadline      time.Time // visible to others again at this time unless settled
	LastError     string    // the last failure reason a consumer gave
	Source        string    // in a dead-letter queue: the queue it came from
	Redrives      int
	Group         string // in a FIFO queue: its message group
}

// NewQueueClient makes a queue client.
func (c *Cluster) NewQueueClient(cfg QueueClientConfig) (*QueueClient, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	if cfg.ClientID == "" {
		return nil, fmt.Errorf("%w: a queue client needs a client id", ErrInvalid)
	}
	if cfg.Prefetch < 0 || cfg.DeliveryTimeout < 0 || cfg.RetryBackoff < 0 || cfg.RetryBackoffMax < 0 {
		return nil, fmt.Errorf("%w: queue client %s: prefetch, timeouts and backoffs cannot be negative", ErrInvalid, cfg.ClientID)
	}
	if cfg.DeliveryTimeout == 0 {
		cfg.DeliveryTimeout = 10 * c.requestTimeout()
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = c.timing.HeartbeatTimeout / 10
	}
	if cfg.RetryBackoffMax == 0 {
		cfg.RetryBackoffMax = c.timing.HeartbeatTimeout
	}
	return &QueueClient{c: c, cfg: cfg}, nil
}

// ClientID returns the client's name.
func (qc *QueueClient) ClientID() string { return qc.cfg.ClientID }

// retryable says whether err means the request did nothing (or may have,
// but doing it again is what a client does): try again, maybe elsewhere.
func retryable(err error) bool {
	return errors.Is(err, ErrNotLeader) || errors.Is(err, ErrNoLeader) ||
		errors.Is(err, raftnet.ErrUnreachable) || errors.Is(err, raftnet.ErrRequestLost)
}

// unknownOutcome says whether err leaves open whether the broker did the work.
func unknownOutcome(err error) bool {
	return errors.Is(err, raftnet.ErrReplyLost) || errors.Is(err, ErrUnknownOutcome)
}

// call runs fn on the queue's ready leader across the network, as client.
func (qc *QueueClient) call(ctx context.Context, name string, kind raftnet.RequestKind, fn func(*replica) error) error {
	if via := qc.cfg.Via; via != "" {
		return qc.c.net.Call(ctx, qc.cfg.ClientID, via, kind, func() error {
			lead := qc.c.leaderOf(name)
			if lead == nil {
				return fmt.Errorf("%w for %s", ErrNoLeader, name)
			}
			if lead.node != via && !qc.c.net.PeerLinkUp(via, lead.node) {
				return fmt.Errorf("%w for %s: %s cannot reach %s, which leads it", ErrNoLeader, name, via, lead.node)
			}
			rep := qc.c.replicaOn(lead.node, name)
			if rep == nil || rep.queue() == nil || !rep.readyLeader() {
				return fmt.Errorf("%w: %s on %s is not a ready leader", ErrNotLeader, name, lead.node)
			}
			return fn(rep)
		})
	}
	lead := qc.c.leaderOf(name)
	if lead == nil {
		return fmt.Errorf("%w for %s", ErrNoLeader, name)
	}
	return qc.c.net.Call(ctx, qc.cfg.ClientID, lead.node, kind, func() error {
		rep := qc.c.replicaOn(lead.node, name)
		if rep == nil || rep.queue() == nil || !rep.readyLeader() {
			return fmt.Errorf("%w: %s on %s is not a ready leader", ErrNotLeader, name, lead.node)
		}
		return fn(rep)
	})
}

// apply proposes cmd on the queue's ready leader through call. A command
// the queue refuses comes back as the error, with the result beside it.
func (qc *QueueClient) apply(ctx context.Context, name string, kind raftnet.RequestKind, cmd queue.Command) (queue.Result, error) {
	var res queue.Result
	err := qc.call(ctx, name, kind, func(rep *replica) error {
		var e error
		res, e = rep.queueApply(cmd)
		if e == nil {
			e = res.Err
		}
		return e
	})
	return res, err
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Send puts messages on a queue, at most queue.MaxBatch per request, and
// returns one result per message, in order. Like a producer it follows the
// leader and retries what real clients retry; a retry after a lost reply
// may put a message in twice, with the same MsgID.
func (qc *QueueClient) Send(ctx context.Context, name string, msgs ...QueueMessage) []SendResult {
	results := make([]SendResult, len(msgs))
	var batch []queue.NewMessage
	var idx []int
	for i := range msgs {
		if msgs[i].MsgID == "" {
			msgs[i].MsgID = qc.cfg.ClientID + "-" + strconv.FormatUint(qc.seq.Add(1), 10)
		}
		results[i] = SendResult{MsgID: msgs[i].MsgID, Outcome: OutcomeFailed}
	}
	if _, err := qc.c.lookupQueue(name); err != nil {
		for i := range results {
			results[i].Err = fmt.Errorf("send: %w", err)
		}
		return results
	}
	flush := func() {
		if len(batch) > 0 {
			qc.sendBatch(ctx, name, batch, idx, results)
		}
		batch, idx = nil, nil
	}
	for i, m := range msgs {
		if m.Delay < 0 || m.Delay > queue.MaxVisibility {
			results[i].Err = fmt.Errorf("%w: send %s to %s: delay %v; want 0 to %v", ErrInvalid, m.MsgID, name, m.Delay, queue.MaxVisibility)
			continue
		}
		attrs := maps.Clone(m.Attributes)
		if m.Group != "" || m.DedupeID != "" {
			if attrs == nil {
				attrs = map[string]string{}
			}
			if m.Group != "" {
				attrs[queue.AttrGroup] = m.Group
			}
			if m.DedupeID != "" {
				attrs[queue.AttrDedupe] = m.DedupeID
			}
		}
		batch = append(batch, queue.NewMessage{MsgID: m.MsgID, Body: m.Body, Attributes: attrs, Delay: m.Delay})
		idx = append(idx, i)
		if len(batch) == queue.MaxBatch {
			flush()
		}
	}
	flush()
	return results
}

func (qc *QueueClient) sendBatch(ctx context.Context, name string, batch []queue.NewMessage, idx []int, results []SendResult) {
	cmd := queue.Command{Op: queue.OpSend, Messages: batch}
	deadline := time.Now().Add(qc.cfg.DeliveryTimeout)
	backoff := qc.cfg.RetryBackoff
	unknown := false
	for attempt := 1; ; attempt++ {
		res, err := qc.apply(ctx, name, raftnet.RequestData, cmd)
		if err == nil {
			for k, i := range idx {
				r := &results[i]
				r.Attempts = attempt
				o := res.Sent[k]
				switch {
				case o.Err == nil:
					r.Outcome, r.Seq, r.Duplicate = OutcomeAcked, o.Seq, o.Duplicate
					if o.Duplicate {
						r.MsgID = o.MsgID
					}
				case errors.Is(o.Err, ErrQueueFull) && unknown:
					// An earlier attempt may have put it in before the
					// queue filled up.
					r.Outcome, r.Rejected = OutcomeUnknown, true
					r.Err = fmt.Errorf("send %s to %s: %w (an earlier attempt's reply was lost: it may be in the queue)", r.MsgID, name, o.Err)
				default:
					r.Outcome, r.Rejected = OutcomeFailed, errors.Is(o.Err, ErrQueueFull)
					r.Err = fmt.Errorf("send %s: %w", r.MsgID, o.Err)
				}
			}
			return
		}
		switch {
		case qc.cfg.Once:
			qc.failBatch(idx, results, attempt, unknownOutcome(err), fmt.Errorf("send to %s: %w", name, err))
			return
		case unknownOutcome(err):
			unknown = true
		case retryable(err):
		default:
			qc.failBatch(idx, results, attempt, unknown, fmt.Errorf("send to %s: %w", name, err))
			return
		}
		if ctx.Err() != nil || time.Now().Add(backoff).After(deadline) {
			qc.failBatch(idx, results, attempt, unknown, fmt.Errorf("send to %s: gave up after %d attempts: %w", name, attempt, err))
			return
		}
		sleep(ctx, backoff)
		backoff = min(2*backoff, qc.cfg.RetryBackoffMax)
	}
}

func (qc *QueueClient) failBatch(idx []int, results []SendResult, attempts int, unknown bool, err error) {
	for _, i := range idx {
		r := &results[i]
		r.Attempts, r.Err, r.Outcome = attempts, err, OutcomeFailed
		if unknown {
			r.Outcome = OutcomeUnknown
		}
	}
}

// Receive takes up to max ready messages from a queue, each invisible to
// other consumers for visibility (0: the queue's default). With wait > 0
// it long-polls: if nothing is ready it waits up to wait for a message.
// It returns no messages and no error when nothing came. A receive whose
// reply is lost is retried; the messages it carried are in flight and
// come back after their visibility timeout, with a higher receive count.
func (qc *QueueClient) Receive(ctx context.Context, name string, max int, visibility, wait time.Duration) ([]Delivery, error) {
	if _, err := qc.c.lookupQueue(name); err != nil {
		return nil, fmt.Errorf("receive: %w", err)
	}
	switch {
	case max < 1 || max > queue.MaxBatch:
		return nil, fmt.Errorf("%w: receive from %s: max %d; want 1 to %d messages", ErrInvalid, name, max, queue.MaxBatch)
	case visibility < 0 || visibility > queue.MaxVisibility:
		return nil, fmt.Errorf("%w: receive from %s: visibility timeout %v; want 0 (the queue's) to %v", ErrInvalid, name, visibility, queue.MaxVisibility)
	case wait < 0 || wait > MaxReceiveWait:
		return nil, fmt.Errorf("%w: receive from %s: wait %v; want 0 to %v", ErrInvalid, name, wait, MaxReceiveWait)
	}
	cmd := queue.Command{Op: queue.OpReceive, Consumer: qc.cfg.ClientID, Max: max, Visibility: visibility, Limit: qc.cfg.Prefetch}
	until := time.Now().Add(wait)
	ctx, cancel := context.WithTimeout(ctx, wait+qc.c.requestTimeout())
	defer cancel()
	backoff := qc.cfg.RetryBackoff
	for attempt := 1; ; attempt++ {
		var got []queue.Delivery
		err := qc.call(ctx, name, raftnet.RequestData, func(rep *replica) error {
			var e error
			got, e = rep.queueReceive(ctx, cmd, until)
			return e
		})
		if err == nil {
			out := make([]Delivery, len(got))
			for i, d := range got {
				out[i] = toDelivery(name, d)
			}
			return out, nil
		}
		if qc.cfg.Once || (!retryable(err) && !unknownOutcome(err)) {
			return nil, fmt.Errorf("receive from %s: %w", name, err)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("receive from %s: gave up after %d attempts: %w", name, attempt, err)
		}
		sleep(ctx, backoff)
		backoff = min(2*backoff, qc.cfg.RetryBackoffMax)
	}
}

func toDelivery(name string, d queue.Delivery) Delivery {
	return Delivery{
		Queue: name, Seq: d.Seq, MsgID: d.MsgID, Body: append([]byte(nil), d.Body...), Attributes: maps.Clone(d.Attributes),
		ReceiptHandle: d.Receipt, ReceiveCount: d.ReceiveCount,
		SentAt: time.Unix(0, d.SentAt), EnqueuedAt: time.Unix(0, d.EnqueuedAt), ReceivedAt: time.Unix(0, d.ReceivedAt), Deadline: time.Unix(0, d.Deadline),
		LastError: d.LastError, Source: d.Source, Redrives: d.Redrives, Group: d.Attributes[queue.AttrGroup],
	}
}

// queueReceive is the leader's handling of a receive: propose it when a
// message could be handed out and no receive that has waited longer could
// take it (queue_line.go), else wait for a change until `until`.
func (rep *replica) queueReceive(ctx context.Context, cmd queue.Command, until time.Time) ([]queue.Delivery, error) {
	f := rep.queue()
	t := f.line.join(cmd.Consumer, cmd.Limit)
	served := false
	defer func() { f.line.leave(t, served) }()
	for {
		now := rep.c.now().UnixNano()
		moved := f.line.wake()
		changed, can := f.watch(now, cmd.Consumer, cmd.Limit)
		if can && f.line.ahead(t, func(consumer string, limit int) bool { return f.canDeliver(now, consumer, limit) }) {
			can = false // an older receive takes it; this one waits its turn
		}
		if can {
			res, err := rep.queueApply(cmd)
			if err != nil {
				return nil, err
			}
			if res.Err != nil {
				return nil, res.Err
			}
			if len(res.Delivered) > 0 {
				served = true
				return res.Delivered, nil
			}
		}
		left := time.Until(until)
		if left <= 0 {
			return nil, nil
		}
		timer := time.NewTimer(min(left, rep.c.queueTickEvery()))
		select {
		case <-changed:
		case <-moved:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-rep.stop:
			timer.Stop()
			return nil, fmt.Errorf("%w: %s on %s shut down", ErrNotLeader, rep.group, rep.node)
		}
		timer.Stop()
		if !rep.readyLeader() {
			return nil, fmt.Errorf("%w: %s on %s", ErrNotLeader, rep.group, rep.node)
		}
	}
}

// Ack deletes a received message. An ack whose reply was lost is retried
// and still succeeds. An ack lost on its way (DropNextAck) is not: the
// message comes back after its visibility timeout.
func (qc *QueueClient) Ack(ctx context.Context, name, receipt string) error {
	errs, err := qc.AckBatch(ctx, name, []string{receipt})
	if err != nil {
		return err
	}
	return errs[0]
}

// AckBatch acks several messages of one queue in one request, with one
// error per receipt; err is for the request as a whole.
func (qc *QueueClient) AckBatch(ctx context.Context, name string, receipts []string) ([]error, error) {
	return qc.settle(ctx, name, queue.Command{Op: queue.OpAck, Receipts: receipts})
}

// Nack gives a received message back: ready again after delay (0: at
// once), with reason kept as its last error. Once it has been received the
// queue's max-receives times it goes to the dead-letter queue instead.
func (qc *QueueClient) Nack(ctx context.Context, name, receipt string, delay time.Duration, reason string) error {
	if delay < 0 || delay > queue.MaxVisibility {
		return fmt.Errorf("%w: nack on %s: delay %v; want 0 to %v", ErrInvalid, name, delay, queue.MaxVisibility)
	}
	return qc.settleOne(ctx, name, queue.Command{Op: queue.OpNack, Receipts: []string{receipt}, Delay: delay, Reason: reason})
}

// ChangeVisibility sets a received message's deadline to timeout from now:
// more time to work on it, or 0 to give it back at once.
func (qc *QueueClient) ChangeVisibility(ctx context.Context, name, receipt string, timeout time.Duration) error {
	if timeout < 0 || timeout > queue.MaxVisibility {
		return fmt.Errorf("%w: change visibility on %s: timeout %v; want 0 to %v", ErrInvalid, name, timeout, queue.MaxVisibility)
	}
	return qc.settleOne(ctx, name, queue.Command{Op: queue.OpChangeVisibility, Receipts: []string{receipt}, Visibility: timeout})
}

// DeadLetter moves a received message to the queue's dead-letter queue at
// once: a permanent failure that no retry will fix.
func (qc *QueueClient) DeadLetter(ctx context.Context, name, receipt, reason string) error {
	rec, err := qc.c.lookupQueue(name)
	if err != nil {
		return fmt.Errorf("dead-letter: %w", err)
	}
	if rec.Config.DLQ == "" {
		return fmt.Errorf("dead-letter on %s: %w: create the queue with a dlq to have somewhere to put it", name, ErrNoDLQ)
	}
	return qc.settleOne(ctx, name, queue.Command{Op: queue.OpDeadLetter, Receipts: []string{receipt}, Reason: reason})
}

func (qc *QueueClient) settleOne(ctx context.Context, name string, cmd queue.Command) error {
	errs, err := qc.settle(ctx, name, cmd)
	if err != nil {
		return err
	}
	return errs[0]
}

// settle sends an ack, nack, visibility change or dead-letter. Requests
// that did nothing are retried; a lost reply is retried only for acks,
// which the queue recognises when repeated.
func (qc *QueueClient) settle(ctx context.Context, name string, cmd queue.Command) ([]error, error) {
	what := cmd.Op.String()
	if _, err := qc.c.lookupQueue(name); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(cmd.Receipts) == 0 || len(cmd.Receipts) > queue.MaxBatch {
		return nil, fmt.Errorf("%w: %s on %s: %d receipts; want 1 to %d", ErrInvalid, what, name, len(cmd.Receipts), queue.MaxBatch)
	}
	ctx, cancel := context.WithTimeout(ctx, qc.c.requestTimeout())
	defer cancel()
	backoff := qc.cfg.RetryBackoff
	for attempt := 1; ; attempt++ {
		res, err := qc.apply(ctx, name, raftnet.RequestAck, cmd)
		if err == nil {
			errs := make([]error, len(res.Errs))
			for i, e := range res.Errs {
				if e != nil {
					errs[i] = fmt.Errorf("%s on %s: %w", what, name, e)
				}
			}
			return errs, nil
		}
		lost := errors.Is(err, raftnet.ErrRequestLost)
		again := !qc.cfg.Once && ((retryable(err) && !lost) || (cmd.Op == queue.OpAck && unknownOutcome(err)))
		if !again {
			if lost {
				return nil, fmt.Errorf("%s on %s: %w: the broker never saw it", what, name, err)
			}
			return nil, fmt.Errorf("%s on %s: %w", what, name, err)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s on %s: gave up after %d attempts: %w", what, name, attempt, err)
		}
		sleep(ctx, backoff)
		backoff = min(2*backoff, qc.cfg.RetryBackoffMax)
	}
}

// Publish sends each message to every queue bound to a fan-out exchange,
// as one independent send per queue, all with the same message ids. The
// copies are not atomic: one queue may be full and reject while the others
// accept, and each queue's results say so.
func (qc *QueueClient) Publish(ctx context.Context, exchange string, msgs ...QueueMessage) (map[string][]SendResult, error) {
	bound, err := qc.c.boundQueues(exchange)
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	if len(bound) == 0 {
		return nil, fmt.Errorf("%w: publish to %s: no queue is bound to it, so the messages would go nowhere", ErrInvalid, exchange)
	}
	for i := range msgs {
		if msgs[i].MsgID == "" {
			msgs[i].MsgID = qc.cfg.ClientID + "-" + strconv.FormatUint(qc.seq.Add(1), 10)
		}
	}
	out := make(map[string][]SendResult, len(bound))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, q := range bound {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := qc.Send(ctx, q, slices.Clone(msgs)...)
			mu.Lock()
			out[q] = res
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out, nil
}

// Purge drops every message a queue holds, in flight and delayed ones
// too, as SQS's PurgeQueue does, and returns how many: each is counted as
// dropped and never delivered again. A purge whose reply was lost is
// retried; the retry drops what arrived in between, as a second purge
// would.
func (qc *QueueClient) Purge(ctx context.Context, name string) (int, error) {
	if _, err := qc.c.lookupQueue(name); err != nil {
		return 0, fmt.Errorf("purge: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, qc.c.requestTimeout())
	defer cancel()
	backoff := qc.cfg.RetryBackoff
	for attempt := 1; ; attempt++ {
		res, err := qc.apply(ctx, name, raftnet.RequestData, queue.Command{Op: queue.OpPurge, Consumer: qc.cfg.ClientID})
		if err == nil {
			n := 0
			for _, ch := range res.Changes {
				if ch.Kind == queue.ChDropped {
					n++
				}
			}
			return n, nil
		}
		if qc.cfg.Once || (!retryable(err) && !unknownOutcome(err)) {
			return 0, fmt.Errorf("purge %s: %w", name, err)
		}
		if ctx.Err() != nil {
			return 0, fmt.Errorf("purge %s: gave up after %d attempts: %w", name, attempt, err)
		}
		sleep(ctx, backoff)
		backoff = min(2*backoff, qc.cfg.RetryBackoffMax)
	}
}
