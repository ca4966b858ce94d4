package broker

import (
	"fmt"

	"github.com/mqlab/mqlab/broker/raftnet"
)

// faultFired reports the moment an armed fault bites, so a timeline shows
// the loss where it happens and not only where it was armed.
func (c *Cluster) faultFired(client, node string, kind raftnet.RequestKind, drop raftnet.DropKind) {
	text := fmt.Sprintf("%s handled %s's %s request, but the reply was lost on the way back", node, client, kind)
	if drop == raftnet.DropAck {
		text = fmt.Sprintf("%s's %s request to %s was lost on the way: %s never saw it", client, kind, node, node)
	}
	c.events.emit(Event{Kind: EventFaultFired, Node: node, Client: client, Text: text})
}

// Armed lists the faults waiting for a client's next request: "reply" for
// a lost reply, "ack" for a lost ack.
func (c *Cluster) Armed(client string) []string {
	var out []string
	for _, d := range c.net.Armed(client) {
		if d == raftnet.DropAck {
			out = append(out, "ack")
		} else {
			out = append(out, "reply")
		}
	}
	return out
}

// Topics returns the configuration of every topic, in creation order, without
// reading any replica: a cheap lookup for validating names.
func (c *Cluster) Topics() []TopicConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	recs := c.topicsLocked()
	out := make([]TopicConfig, len(recs))
	for i, r := range recs {
		out[i] = r.Config
	}
	return out
}
