package raftnet

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// RequestKind classifies a client request, to decide which armed faults
// apply to it.
type RequestKind int

const (
	// RequestMetadata: cluster and topic metadata lookups. Never dropped.
	RequestMetadata RequestKind = iota
	// RequestData: produce, fetch, send, receive.
	RequestData
	// RequestAck: ack, delete, offset commit.
	RequestAck
)

func (k RequestKind) String() string {
	switch k {
	case RequestMetadata:
		return "metadata"
	case RequestData:
		return "data"
	case RequestAck:
		return "ack"
	}
	return fmt.Sprintf("RequestKind(%d)", int(k))
}

// DropKind is a one-shot client fault armed with DropNext.
type DropKind int

const (
	// DropReply: the client's next data or ack request reaches the node
	// and is handled, but the reply is lost (ErrReplyLost).
	DropReply DropKind = iota
	// DropAck: the client's next ack request is lost on the way; the node
	// never sees it (ErrRequestLost).
	DropAck
	// DropAcks: every ack request the client sends is lost on the way, as
	// DropAck loses one, until Disarm: a client whose commits never
	// arrive, however often it retries them.
	DropAcks
)

func (k DropKind) String() string {
	switch k {
	case DropReply:
		return "drop-reply"
	case DropAck:
		return "drop-ack"
	case DropAcks:
		return "drop-acks"
	}
	return fmt.Sprintf("DropKind(%d)", int(k))
}

// armSet is a set of DropKinds, one bit each.
type armSet uint8

func (s armSet) has(k DropKind) bool { return s&(1<<k) != 0 }

// DropNext arms a fault for client's next matching request (see
// DropReply, DropAck), or for every ack request until Disarm (DropAcks).
// Arming a kind that is already armed changes nothing:
// each kind is armed or not. An unknown kind is ignored. An armed fault is
// consumed only by a request that actually reaches the node, not by one that
// fails as unreachable.
func (n *Network) DropNext(client string, kind DropKind) {
	if kind != DropReply && kind != DropAck && kind != DropAcks {
		return
	}
	n.armMu.Lock()
	defer n.armMu.Unlock()
	s := n.arms[client]
	if s == 0 {
		n.armedClients.Add(1)
	}
	n.arms[client] = s | 1<<kind
}

// Armed lists the faults armed for client, in DropKind order.
func (n *Network) Armed(client string) []DropKind {
	n.armMu.Lock()
	defer n.armMu.Unlock()
	s := n.arms[client]
	var out []DropKind
	for _, k := range []DropKind{DropReply, DropAck, DropAcks} {
		if s.has(k) {
			out = append(out, k)
		}
	}
	return out
}

// Disarm removes every fault armed for client.
func (n *Network) Disarm(client string) {
	n.armMu.Lock()
	defer n.armMu.Unlock()
	if n.arms[client] != 0 {
		delete(n.arms, client)
		n.armedClients.Add(-1)
	}
}

// LostAcks is how many of client's ack requests armed faults have lost.
func (n *Network) LostAcks(client string) int {
	n.armMu.Lock()
	defer n.armMu.Unlock()
	return n.lostAcks[client]
}

// takeArm consumes the armed fault that applies to client's request of
// this kind as it arrives (reply false: a DropAck loses it) or as its
// answer leaves (reply true: a DropReply loses the answer), if any. An ack
// request with both armed is lost on the way, and DropReply stays armed.
func (n *Network) takeArm(client string, kind RequestKind, reply bool) (DropKind, bool) {
	if kind != RequestData && kind != RequestAck {
		return 0, false
	}
	if n.armedClients.Load() == 0 {
		return 0, false // fast path: nothing armed anywhere
	}
	n.armMu.Lock()
	defer n.armMu.Unlock()
	s := n.arms[client]
	var drop DropKind
	switch {
	case reply && s.has(DropReply):
		drop = DropReply
	case reply:
		return 0, false
	case kind == RequestAck && s.has(DropAck):
		drop = DropAck
	case kind == RequestAck && s.has(DropAcks):
		n.lostAcks[client]++
		return DropAck, true // it stays armed
	default:
		return 0, false
	}
	if drop == DropAck {
		n.lostAcks[client]++
	}
	s &^= 1 << drop
	if s == 0 {
		delete(n.arms, client)
		n.armedClients.Add(-1)
	} else {
		n.arms[client] = s
	}
	return drop, true
}

// Call runs fn as node's handling of client's request, across the network:
//
//   - If node is down or isolated, fn does not run and Call fails at once
//     with ErrUnreachable.
//   - The request, then the reply, each wait out node's latency (Slow). If
//     ctx ends or the link is cut before the request arrives, fn does not
//     run; if that happens on the way back, fn has run and the error wraps
//     ErrReplyLost too.
//   - An armed DropAck on an ack request: fn does not run; ErrRequestLost.
//   - An armed DropReply on a data or ack request: fn runs, and if it
//     succeeded its answer is lost: ErrReplyLost. A request the node
//     refused (fn's error: not the leader, say) is answered as usual and
//     the DropReply waits for the next: the fault is the reply to work the
//     node did.
//   - Metadata requests are never dropped.
//
// Otherwise Call returns fn's error as is.
func (n *Network) Call(ctx context.Context, client, node string, kind RequestKind, fn func() error) error {
	fail := func(err error) error {
		return fmt.Errorf("raftnet: %s request %s -> %s: %w", kind, client, node, err)
	}
	if fn == nil {
		return fail(errors.New("nil handler"))
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if err := n.faults.Load().clientErr(node); err != nil {
		return fail(err)
	}

	// The request travels to the node.
	if err := n.travel(ctx, node); err != nil {
		return fail(err)
	}
	if drop, armed := n.takeArm(client, kind, false); armed {
		n.dropped(client, node, kind, drop)
		return fail(ErrRequestLost)
	}

	err := fn()

	// The reply travels back.
	if terr := n.travel(ctx, node); terr != nil {
		return fail(fmt.Errorf("%w: %w", ErrReplyLost, terr))
	}
	if err == nil {
		if drop, armed := n.takeArm(client, kind, true); armed {
			n.dropped(client, node, kind, drop)
			return fail(ErrReplyLost)
		}
	}
	return err
}

func (n *Network) dropped(client, node string, kind RequestKind, drop DropKind) {
	if n.onDrop != nil {
		n.onDrop(client, node, kind, drop)
	}
}

// travel waits out node's latency for one client message, then reports
// whether the message got through: ctx still live, node up and reachable.
// A fault change during the wait is noticed at once.
func (n *Network) travel(ctx context.Context, node string) error {
	f := n.faults.Load()
	d := f.latency[node]
	if d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
	wait:
		for {
			select {
			case <-timer.C:
				break wait
			case <-ctx.Done():
				return ctx.Err()
			case <-f.changed:
				f = n.faults.Load()
				if err := f.clientErr(node); err != nil {
					return err
				}
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return n.faults.Load().clientErr(node)
}
