package lab

// Where a load's messages go (package lab/loads runs the generators): onto
// a topic, through the lab's producer clients, each into the history as a
// produce; or onto a queue, `load QUEUE rate=… for=…`, so that a scene can
// keep a queue busy while its workers change, each into the history as a
// send with its outcome: accepted, or rejected by a full queue
// (back-pressure).

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/loads"
)

func (r *run) load(ctx context.Context, c command.Load) error {
	if handled, err := r.loadQueue(ctx, c); handled {
		return err
	}
	cl, p, err := r.produceSetup(ctx, "load", c.Topic, c.As, loads.DefaultClient, c.Acks, c.Idempotent, c.Batch)
	if err != nil {
		return err
	}
	total, err := loads.Total("load", c)
	if err != nil {
		return err
	}
	r.w.loads.Start(r, c, cl.name, total, r.l.produceBatches(r.w, c, cl, p), "")
	return nil
}

// produceBatches is a load's Batches onto a topic.
func (l *Lab) produceBatches(w *world, c command.Load, cl *client, p *broker.Producer) loads.Batches {
	return func(first, n int) func() []checker.Outcome {
		msgs, recs := w.prepare(cl, c.Topic, first, n, ackText(c.Acks), c.Idempotent, false, 0,
			keyFunc(c.Key, c.Keyed), valueFunc(c.Value, c.HasValue), l.clock.Now())
		return func() []checker.Outcome {
			res := p.Produce(w.ctx, msgs...)
			w.settle(recs, res, l.clock.Now())
			out := make([]checker.Outcome, len(res))
			for i, r := range res {
				out[i] = outcomeOf(r.Outcome)
				if r.Duplicate {
					// Rare, and the point of an idempotent producer: said
					// even though a load's messages are not told one by one.
					l.tl.Add(Event{Time: l.clock.Now(), Kind: EventLoad, Text: fmt.Sprintf(
						"load %s as %s: %s took %d attempts; the partition recognised the retry and answered with the original offset %d",
						c.Topic, cl.name, msgs[i].MsgID, r.Attempts, r.Offset)})
				}
			}
			return out
		}
	}
}

func ackText(a string) string {
	if a == "" {
		return "all"
	}
	return a
}

// loadQueue starts a load onto the queue c.Topic names. handled is false
// when c.Topic is a topic, for load itself to produce to; a name that is
// neither is an error that lists both.
func (r *run) loadQueue(_ context.Context, c command.Load) (handled bool, err error) {
	if !r.w.isQueue(c.Topic) {
		if _, err := r.w.topic(c.Topic); err == nil {
			return false, nil
		}
		return true, r.w.noLoadTarget(c.Topic)
	}
	return true, r.startQueueLoad(c)
}

// noLoadTarget says that name is neither a topic nor a queue, and what is.
func (w *world) noLoadTarget(name string) error {
	snap := w.cluster.SnapshotWindow(0)
	var names []string
	for _, t := range snap.Topics {
		if !broker.IsInternalTopic(t.Config.Name) {
			names = append(names, t.Config.Name)
		}
	}
	for _, q := range snap.Queues {
		names = append(names, q.Config.Name)
	}
	if len(names) == 0 {
		return fmt.Errorf("load %s: %w %q and no queue of that name: there are none yet; create one with topic create %s partitions=1 or queue create %s",
			name, broker.ErrUnknownTopic, name, name, name)
	}
	return fmt.Errorf("load %s: %w %q and no queue of that name; the topics and queues are %s%s",
		name, broker.ErrUnknownTopic, name, strings.Join(names, ", "), didYouMean(name, names))
}

// startQueueLoad starts a load onto a queue.
func (r *run) startQueueLoad(c command.Load) error {
	verb := "load " + c.Topic
	var topicOnly []string
	if c.Keyed {
		topicOnly = append(topicOnly, "key=")
	}
	if c.Acks != "" {
		topicOnly = append(topicOnly, "acks=")
	}
	if c.Idempotent {
		topicOnly = append(topicOnly, "idempotent=")
	}
	if c.Batch != command.DefaultBatch {
		topicOnly = append(topicOnly, "batch=")
	}
	if len(topicOnly) > 0 {
		return fmt.Errorf("%s: %s is a queue, and %s only for a topic: a queue message has no key, and the queue accepts or rejects each send; leave them out",
			verb, c.Topic, strings.Join(topicOnly, " "))
	}
	name := c.As
	if name == "" {
		name = loads.DefaultClient
	}
	if strings.HasPrefix(name, "_") {
		return fmt.Errorf("%s: client names cannot start with '_'", verb)
	}
	total, err := loads.Total(verb, c)
	if err != nil {
		return err
	}
	cl, qc, err := r.w.queues.sender(name)
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	r.w.loads.Start(r, c, cl.name, total, r.l.sendBatches(r.w, c, cl, qc), " onto the queue")
	return nil
}

// sendBatches is a load's Batches onto a queue.
func (l *Lab) sendBatches(w *world, c command.Load, cl *client, qc *broker.QueueClient) loads.Batches {
	qs := w.queues
	return func(first, n int) func() []checker.Outcome {
		msgs, recs := qs.prepareSends(cl, c, first, n, l.clock.Now())
		return func() []checker.Outcome {
			res := qc.Send(w.ctx, c.Topic, msgs...)
			return qs.settleSends(recs, res, l.clock.Now())
		}
	}
}

// prepareSends numbers n messages of a queue load from first and records
// them as pending sends.
func (qs *queueSet) prepareSends(cl *client, c command.Load, first, n int, now time.Time) ([]broker.QueueMessage, []*QueueSend) {
	msgs := make([]broker.QueueMessage, n)
	recs := make([]*QueueSend, n)
	for i := range msgs {
		id := cl.nextID()
		v := id
		if c.HasValue {
			v = template(c.Value, first+i)
		}
		msgs[i] = broker.QueueMessage{Body: []byte(v), MsgID: id}
		recs[i] = &QueueSend{MsgID: id, Client: cl.name, Queue: c.Topic, Value: v, Outcome: checker.Pending, Sent: now}
	}
	qs.mu.Lock()
	qs.sends = append(qs.sends, recs...)
	qs.mu.Unlock()
	return msgs, recs
}

// settleSends records the queue's answers and returns each send's outcome.
func (qs *queueSet) settleSends(recs []*QueueSend, res []broker.SendResult, now time.Time) []checker.Outcome {
	out := make([]checker.Outcome, len(recs))
	qs.mu.Lock()
	defer qs.mu.Unlock()
	for i, s := range recs {
		if i >= len(res) {
			s.Outcome = checker.Unknown
			out[i] = s.Outcome
			continue
		}
		rs := res[i]
		s.Seq, s.Attempts, s.Answered = rs.Seq, rs.Attempts, now
		s.Outcome = outcomeOf(rs.Outcome)
		if rs.Rejected {
			s.Outcome = checker.Rejected
		}
		if rs.Err != nil {
			s.Err = rs.Err.Error()
		}
		out[i] = s.Outcome
	}
	return out
}
