package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqlab/mqlab/broker/queue"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// Every queue has a keeper, a goroutine the cluster owns from CreateQueue
// to Close. Whichever node leads the queue, the keeper acts through it:
//
//   - when a visibility deadline, a delay or a TTL is due by the leader's
//     clock, it proposes a tick carrying that clock, so the message comes
//     back (or expires) on every replica alike, even if nobody receives;
//   - it empties the outbox: each message marked to move (dead-letter,
//     redrive) is handed to the destination queue's leader, which
//     deduplicates by transfer id, and only then dropped from the source.
//     A failover between the two steps makes the next leader hand it over
//     again; the destination recognises it, and the move is recorded once.

// queueTickEvery is how often a keeper looks: a fifth of a heartbeat
// timeout, so a deadline takes effect within tens of milliseconds with
// fast timing.
func (c *Cluster) queueTickEvery() time.Duration {
	return max(5*time.Millisecond, c.timing.HeartbeatTimeout/5)
}

// keepQueue keeps the queue name created as number seq, until the cluster
// closes or that queue is deleted (a queue created again under its name
// has a keeper of its own).
func (c *Cluster) keepQueue(name string, seq int) {
	defer c.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	var watcher sync.WaitGroup
	watcher.Add(1)
	go func() {
		defer watcher.Done()
		select {
		case <-c.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	defer func() {
		cancel()
		watcher.Wait()
	}()
	t := time.NewTicker(c.queueTickEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if rec, ok := c.queueRecordOf(name); !ok || rec.Seq != seq {
			return
		}
		c.keepOnce(ctx, name)
	}
}

func (c *Cluster) keepOnce(ctx context.Context, name string) {
	lead := c.leaderOf(name)
	if lead == nil || lead.queue() == nil || !lead.readyLeader() {
		return
	}
	if due, ok := lead.queue().nextDue(); ok && due <= c.now().UnixNano() {
		if _, err := lead.queueApply(queue.Command{Op: queue.OpTick}); err != nil {
			return // leadership moved; the next leader's keeper round ticks
		}
	}
	for _, out := range lead.queue().outbox() {
		if ctx.Err() != nil {
			return
		}
		if err := c.moveOut(ctx, lead, out); err != nil {
			return // try again next round, maybe from another leader
		}
	}
}

// moveHook, set only by tests, runs after a message has reached its
// destination and before its source drops it: the moment a failover must
// neither lose nor double it. It sees the moves of every cluster in the
// process: a test picks out its own by the cluster.
var moveHook atomic.Pointer[func(c *Cluster, source string, out queue.Outgoing, arrived queue.Result)]

// moveOut hands one message to its destination queue, then drops it from
// the source.
func (c *Cluster) moveOut(ctx context.Context, lead *replica, out queue.Outgoing) error {
	ctx, cancel := context.WithTimeout(ctx, c.requestTimeout())
	defer cancel()
	in := queue.Command{Op: queue.OpTransferIn, TransferID: out.TransferID, Kind: out.Kind, Transfer: out.Transfer}
	arrived, err := c.forward(ctx, lead.node, out.To, in)
	if err != nil {
		return err
	}
	if h := moveHook.Load(); h != nil {
		(*h)(c, lead.group, out, arrived)
	}
	res, err := lead.queueApply(queue.Command{Op: queue.OpMoved, Seq: out.Seq, TransferID: out.TransferID})
	if err == nil {
		err = res.Err
	}
	return err
}

// forward proposes cmd on another queue's leader on behalf of node: a
// broker-to-broker request, so it needs the link between the two nodes.
func (c *Cluster) forward(ctx context.Context, from, name string, cmd queue.Command) (queue.Result, error) {
	target := c.leaderOf(name)
	if target == nil {
		return queue.Result{}, fmt.Errorf("%w for %s", ErrNoLeader, name)
	}
	if target.node != from && !c.net.PeerLinkUp(from, target.node) {
		return queue.Result{}, fmt.Errorf("%s cannot reach %s, leader of %s: %w", from, target.node, name, raftnet.ErrUnreachable)
	}
	var res queue.Result
	err := c.net.Call(ctx, "broker "+from, target.node, raftnet.RequestMetadata, func() error {
		rep := c.replicaOn(target.node, name)
		if rep == nil || !rep.readyLeader() {
			return fmt.Errorf("%w: %s on %s is not a ready leader", ErrNotLeader, name, target.node)
		}
		var err error
		res, err = rep.queueApply(cmd)
		if err == nil && res.Err != nil {
			err = res.Err
		}
		return err
	})
	if err != nil && !errors.Is(err, ErrNotLeader) {
		c.logf("queue %s: forward to %s via %s: %v", name, target.node, from, err)
	}
	return res, err
}
