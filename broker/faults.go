package broker

// What a lab does to break the cluster: kill and restart nodes, isolate,
// partition and slow them, lose a client's next reply or ack; and the event
// that shows when an armed fault bites.

import (
	"fmt"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker/raftnet"
)

// Kill stops a node as if its process died: its raft instances and all its
// memory are gone, its disk stays.
func (c *Cluster) Kill(id string) error {
	c.admin.Lock()
	defer c.admin.Unlock()
	n, err := c.node(id)
	if err != nil {
		return fmt.Errorf("kill: %w", err)
	}
	c.mu.Lock()
	if !n.up {
		c.mu.Unlock()
		return fmt.Errorf("kill %s: %w already; restart it first", id, ErrNodeDown)
	}
	n.up = false
	reps := make([]*replica, 0, len(n.replicas))
	for _, r := range n.replicas {
		reps = append(reps, r)
	}
	n.replicas = map[string]*replica{}
	c.mu.Unlock()
	c.net.SetDown(id, true)
	shutdownAll(reps)
	c.events.emit(Event{Kind: EventNodeKilled, Node: id, Text: fmt.Sprintf("%s killed: its memory is gone, its disk stays", id)})
	c.nodeChanged(id, false)
	return nil
}

// Restart brings a killed node back: every replica it hosts is rebuilt
// from its disk and rejoins its group.
func (c *Cluster) Restart(id string) error {
	c.admin.Lock()
	defer c.admin.Unlock()
	n, err := c.node(id)
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	c.mu.Lock()
	if n.up {
		c.mu.Unlock()
		return fmt.Errorf("restart %s: %w already; kill it first", id, ErrNodeUp)
	}
	n.up = true
	groups := c.groupsOnLocked(id)
	c.mu.Unlock()
	c.net.SetDown(id, false)
	for _, g := range groups {
		if err := c.startOn(id, g, nil); err != nil {
			return fmt.Errorf("restart %s: %w", id, err)
		}
	}
	c.events.emit(Event{Kind: EventNodeRestarted, Node: id, Text: fmt.Sprintf("%s restarted from its disk", id)})
	c.nodeChanged(id, true)
	return nil
}

// Isolate cuts every link of a node, to its peers and to clients.
func (c *Cluster) Isolate(id string) error {
	if _, err := c.node(id); err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	c.net.Isolate(id)
	c.events.emit(Event{Kind: EventLinkCut, Node: id, Text: fmt.Sprintf("%s isolated: no peer and no client reaches it", id)})
	return nil
}

// Partition cuts the node-to-node links between the sides; clients still
// reach every node. Nodes on no side keep their links.
func (c *Cluster) Partition(sides ...[]string) error {
	if len(sides) < 2 {
		return fmt.Errorf("%w: partition needs at least two sides, e.g. n1 | n2,n3", ErrInvalid)
	}
	seen := map[string]bool{}
	var names []string
	for _, side := range sides {
		if len(side) == 0 {
			return fmt.Errorf("%w: partition: a side is empty", ErrInvalid)
		}
		for _, id := range side {
			if _, err := c.node(id); err != nil {
				return fmt.Errorf("partition: %w", err)
			}
			if seen[id] {
				return fmt.Errorf("%w: partition: %s is on two sides", ErrInvalid, id)
			}
			seen[id] = true
		}
		names = append(names, strings.Join(side, ","))
	}
	c.net.Partition(sides...)
	c.events.emit(Event{Kind: EventLinkCut, Text: "network partitioned: " + strings.Join(names, " | ")})
	return nil
}

// Heal restores every link and removes every added latency.
func (c *Cluster) Heal() {
	c.net.Heal()
	c.events.emit(Event{Kind: EventLinkHealed, Text: "every link healed"})
}

// Slow adds latency to every message to or from a node; 0 removes it.
func (c *Cluster) Slow(id string, d time.Duration) error {
	if _, err := c.node(id); err != nil {
		return fmt.Errorf("slow: %w", err)
	}
	if d < 0 {
		return fmt.Errorf("%w: slow %s: latency %v is negative", ErrInvalid, id, d)
	}
	c.net.Slow(id, d)
	text := fmt.Sprintf("%s slowed by %v each way", id, d)
	if d == 0 {
		text = fmt.Sprintf("%s back to full speed", id)
	}
	c.events.emit(Event{Kind: EventSlow, Node: id, Text: text})
	return nil
}

// DropNextReply makes the broker do the client's next data request but
// lose the reply, so the client cannot know it succeeded. A request the
// broker refuses (sent to a node that no longer leads, say) is answered,
// and the fault waits for the next request the broker carries out.
func (c *Cluster) DropNextReply(client string) error {
	return c.dropNext(client, raftnet.DropReply, "reply", fmt.Sprintf("the next reply to %s will be lost", client))
}

// DropNextAck loses the client's next ack, delete or offset commit on its
// way to the broker.
func (c *Cluster) DropNextAck(client string) error {
	return c.dropNext(client, raftnet.DropAck, "ack", fmt.Sprintf("the next ack from %s will be lost", client))
}

// LoseAcksFrom loses every ack, delete or offset commit the client sends
// until LetAcksThrough: a client cut off from its commits, however often
// it retries them.
func (c *Cluster) LoseAcksFrom(client string) error {
	return c.dropNext(client, raftnet.DropAcks, "acks", fmt.Sprintf("every ack from %s will be lost until the lab lets them through", client))
}

// LetAcksThrough ends every fault armed for the client.
func (c *Cluster) LetAcksThrough(client string) { c.net.Disarm(client) }

// LostAcks is how many of the client's acks armed faults have lost.
func (c *Cluster) LostAcks(client string) int { return c.net.LostAcks(client) }

// dropNext arms one lost message for the client's next request and
// announces it; what names the message in the error for a missing client.
func (c *Cluster) dropNext(client string, drop raftnet.DropKind, what, text string) error {
	if client == "" {
		return fmt.Errorf("%w: drop next %s: name a client", ErrInvalid, what)
	}
	c.net.DropNext(client, drop)
	c.events.emit(Event{Kind: EventFaultArmed, Client: client, Text: text})
	return nil
}

// Armed lists the faults waiting for a client's next request: "reply" for
// a lost reply, "ack" for a lost ack, "acks" for every ack lost.
func (c *Cluster) Armed(client string) []string {
	var out []string
	for _, d := range c.net.Armed(client) {
		switch d {
		case raftnet.DropAck:
			out = append(out, "ack")
		case raftnet.DropAcks:
			out = append(out, "acks")
		default:
			out = append(out, "reply")
		}
	}
	return out
}

// faultFired reports the moment an armed fault bites, so a timeline shows
// the loss where it happens and not only where it was armed.
func (c *Cluster) faultFired(client, node string, kind raftnet.RequestKind, drop raftnet.DropKind) {
	text := fmt.Sprintf("%s handled %s's %s request, but the reply was lost on the way back", node, client, kind)
	if drop == raftnet.DropAck {
		text = fmt.Sprintf("%s's %s request to %s was lost on the way: %s never saw it", client, kind, node, node)
	}
	c.events.emit(Event{Kind: EventFaultFired, Node: node, Client: client, Text: text})
}
