package lab

// A load onto a queue: `load QUEUE rate=… for=…` sends in the background
// as `load TOPIC` produces, so that a scene can keep a queue busy while
// its workers change. Each message goes into the history as a send with
// its outcome: accepted, or rejected by a full queue (back-pressure).

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
)

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
		name = defaultLoadClient
	}
	if strings.HasPrefix(name, "_") {
		return fmt.Errorf("%s: client names cannot start with '_'", verb)
	}
	total, err := loadTotal(verb, c)
	if err != nil {
		return err
	}
	cl, qc, err := r.w.queues.sender(name)
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	r.startLoad(c, cl, total, func(ld *load) sendBatch { return r.l.sendBatches(r.w, ld, cl, qc) })
	r.say(EventLoad, "load %s: %d messages as %s onto the queue, %s/s of lab time for %v%s", c.Topic, total, cl.name, trimFloat(c.Rate), c.For, afterText(c.After))
	return nil
}

// sendBatches is a load's sendBatch onto a queue.
func (l *Lab) sendBatches(w *world, ld *load, cl *client, qc *broker.QueueClient) sendBatch {
	qs := w.queues
	return func(first, n int) func() []checker.Outcome {
		msgs, recs := qs.prepareSends(cl, ld.cmd, first, n, l.clock.Now())
		return func() []checker.Outcome {
			res := qc.Send(w.ctx, ld.cmd.Topic, msgs...)
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

// fromLoad says whether a message id (CLIENT-N) is one a load sent. The
// timeline marks the per-message events of such messages as Detail: a
// load sends hundreds, and its own lines and the lab values sum them up.
func (w *world) fromLoad(msgID string) bool {
	i := strings.LastIndexByte(msgID, '-')
	if i <= 0 {
		return false
	}
	_, ok := w.loadClients.Load(msgID[:i])
	return ok
}
