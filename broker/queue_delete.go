package broker

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mqlab/mqlab/broker/queue"
)

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
