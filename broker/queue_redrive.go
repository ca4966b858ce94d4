package broker

// Redrive: a dead-letter queue's messages sent back to the queues they
// were dead-lettered from.

import (
	"context"
	"fmt"
	"strings"

	"github.com/mqlab/mqlab/broker/queue"
)

// dlqSources lists the queues whose dead-letter queue is name.
func (c *Cluster) dlqSources(name string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, q := range c.queuesLocked() {
		if q.Config.DLQ == name {
			out = append(out, q.Config.Name)
		}
	}
	return out
}

// Redrive moves the messages of a dead-letter queue that nobody holds in
// flight (ready or delayed) back: each to the queue it was dead-lettered
// from, or all to `to` when it is not "". Moves ignore the destination's
// max length: a message on its way is never dropped.
// They arrive as new messages with the same message ids and their receive
// counts start afresh. It returns how many it moved, once they have all
// arrived (or ctx ends).
func (c *Cluster) Redrive(ctx context.Context, dlq, to string) (int, error) {
	if _, err := c.lookupQueue(dlq); err != nil {
		return 0, fmt.Errorf("redrive: %w", err)
	}
	sources := c.dlqSources(dlq)
	if len(sources) == 0 {
		return 0, fmt.Errorf("%w: redrive %s: it is not the dead-letter queue of any queue; redrive moves dead letters back where they came from", ErrInvalid, dlq)
	}
	if to == dlq {
		return 0, fmt.Errorf("%w: redrive %s to itself would move nothing", ErrInvalid, dlq)
	}
	if to != "" {
		if _, err := c.lookupQueue(to); err != nil {
			return 0, fmt.Errorf("redrive %s: %w", dlq, err)
		}
	}
	res, err := c.applyOnQueueLeader(ctx, dlq, queue.Command{Op: queue.OpRedrive, To: to})
	if err != nil {
		return 0, fmt.Errorf("redrive %s: %w", dlq, err)
	}
	where := to
	if where == "" {
		where = strings.Join(sources, ", ")
	}
	c.events.emit(Event{Kind: EventQueueRedrive, Group: dlq, Text: fmt.Sprintf("redrive of %s started: %d message(s) going back to %s", dlq, res.Redriving, where)})
	err = poll(ctx, func() bool {
		lead := c.leaderOf(dlq)
		if lead == nil || lead.queue() == nil {
			return false
		}
		for _, o := range lead.queue().outbox() {
			if o.Kind == queue.Redrive {
				return false
			}
		}
		return true
	})
	if err != nil {
		return res.Redriving, fmt.Errorf("redrive %s: %d message(s) marked, not all arrived yet: %w", dlq, res.Redriving, err)
	}
	return res.Redriving, nil
}
