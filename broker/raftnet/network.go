// Package raftnet is the lab's network: an in-memory, fault-injecting stand-in
// for the wire between brokers, and between clients and brokers.
//
// Every broker node runs in the same process, and every partition is its own
// hashicorp/raft group. Each raft replica gets a [Transport] from a shared
// [Network], and every client request to a node goes through [Network.Call].
// Because all traffic crosses this one package, a lesson can kill a node,
// isolate it, split the cluster into partitions, slow a node down, or lose a
// single reply or request, and then watch how raft and the clients cope.
//
// Fault state is read on every message, so it is kept in an immutable
// snapshot behind an atomic pointer: the hot path takes no lock for it. Fault
// changes (rare) build a new snapshot and close the old one's changed
// channel, which wakes messages in flight so they can notice a cut at once.
package raftnet

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Errors callers branch on. They are always wrapped with context.
var (
	// ErrUnreachable: the message could not get through: a node is down, a
	// link is cut, or the target endpoint is not registered (or closed).
	ErrUnreachable = errors.New("raftnet: unreachable")
	// ErrReplyLost: the node handled the request, but its reply never
	// reached the caller. The work may have been done.
	ErrReplyLost = errors.New("raftnet: reply lost")
	// ErrRequestLost: the request never reached the node; nothing was done.
	ErrRequestLost = errors.New("raftnet: request lost")
	// ErrTimeout: a raft RPC got no response within Options.RPCTimeout.
	ErrTimeout = errors.New("raftnet: rpc timed out")
	// ErrClosed: the calling transport has been closed.
	ErrClosed = errors.New("raftnet: transport closed")
	// ErrAddrInUse: an open transport already has this address.
	ErrAddrInUse = errors.New("raftnet: address already registered")
	// ErrBadAddress: a node or group name cannot form an address.
	ErrBadAddress = errors.New("raftnet: bad address")
)

// DefaultRPCTimeout is used when Options.RPCTimeout is not positive.
const DefaultRPCTimeout = 500 * time.Millisecond

// Options configures a Network.
type Options struct {
	// RPCTimeout is how long a raft RPC waits for an unresponsive peer
	// before failing with ErrTimeout, on top of the links' latency. Calls
	// to a down node or across a cut link fail at once instead.
	// InstallSnapshot gets ten times as long, since it carries bulk data.
	// Default DefaultRPCTimeout.
	RPCTimeout time.Duration
	// OnDrop, if set, is told when an armed fault bites: which client's
	// request to which node, and what was lost. It runs on the caller's
	// goroutine and must not block.
	OnDrop func(client, node string, kind RequestKind, drop DropKind)
}

// Network connects raft transports and clients to nodes, and injects faults
// between them. All methods are safe for concurrent use.
type Network struct {
	rpcTimeout time.Duration
	onDrop     func(client, node string, kind RequestKind, drop DropKind)

	// faults is the current fault snapshot; never nil, never mutated.
	faults atomic.Pointer[faults]
	// faultMu serialises writers of faults (copy, change, swap).
	faultMu sync.Mutex

	mu        sync.RWMutex // guards endpoints and nodes
	endpoints map[raft.ServerAddress]*Transport
	nodes     map[string]struct{} // every node that ever had a transport, for CutLinks

	armMu sync.Mutex
	arms  map[string]armSet // client faults, by client
	// lostAcks counts each client's ack requests lost to an armed fault.
	lostAcks map[string]int
	// armedClients counts entries in arms, so Call can skip armMu when
	// nothing is armed (the usual case).
	armedClients atomic.Int64
}

// New returns an empty, fully connected network.
func New(opts Options) *Network {
	if opts.RPCTimeout <= 0 {
		opts.RPCTimeout = DefaultRPCTimeout
	}
	n := &Network{
		rpcTimeout: opts.RPCTimeout,
		onDrop:     opts.OnDrop,
		endpoints:  make(map[raft.ServerAddress]*Transport),
		nodes:      make(map[string]struct{}),
		arms:       make(map[string]armSet),
		lostAcks:   make(map[string]int),
	}
	n.faults.Store(newFaults())
	return n
}

// Addr is the raft address of group's replica on node: "node/group".
func Addr(node, group string) raft.ServerAddress {
	return raft.ServerAddress(node + "/" + group)
}

// SplitAddr undoes Addr. Node names cannot contain "/", so the split is at
// the first one; an address without "/" is all node.
func SplitAddr(addr raft.ServerAddress) (node, group string) {
	node, group, _ = strings.Cut(string(addr), "/")
	return node, group
}

// link is an undirected node-node link, a < b.
type link struct{ a, b string }

func makeLink(a, b string) link {
	if b < a {
		a, b = b, a
	}
	return link{a, b}
}

// faults is one immutable snapshot of the injected faults.
type faults struct {
	down     map[string]bool
	isolated map[string]bool // every link of the node is cut, clients' too
	cut      map[link]bool   // node-node links cut by Partition
	latency  map[string]time.Duration
	// changed is closed when a newer snapshot replaces this one.
	changed chan struct{}
}

func newFaults() *faults {
	return &faults{
		down:     map[string]bool{},
		isolated: map[string]bool{},
		cut:      map[link]bool{},
		latency:  map[string]time.Duration{},
		changed:  make(chan struct{}),
	}
}

func (f *faults) clone() *faults {
	return &faults{
		down:     cloneMap(f.down),
		isolated: cloneMap(f.isolated),
		cut:      cloneMap(f.cut),
		latency:  cloneMap(f.latency),
		changed:  make(chan struct{}),
	}
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (f *faults) peerLinkUp(a, b string) bool {
	if a == b {
		return true // a node always reaches itself
	}
	if f.isolated[a] || f.isolated[b] {
		return false
	}
	return !f.cut[makeLink(a, b)]
}

// peerErr says why a message between nodes a and b cannot get through, or
// returns nil if it can.
func (f *faults) peerErr(a, b string) error {
	switch {
	case f.down[a]:
		return fmt.Errorf("node %s is down: %w", a, ErrUnreachable)
	case f.down[b]:
		return fmt.Errorf("node %s is down: %w", b, ErrUnreachable)
	case !f.peerLinkUp(a, b):
		return fmt.Errorf("link %s-%s is cut: %w", a, b, ErrUnreachable)
	}
	return nil
}

// clientErr says why a client cannot reach node, or returns nil.
func (f *faults) clientErr(node string) error {
	switch {
	case f.down[node]:
		return fmt.Errorf("node %s is down: %w", node, ErrUnreachable)
	case f.isolated[node]:
		return fmt.Errorf("node %s is isolated: %w", node, ErrUnreachable)
	}
	return nil
}

// update applies change to a copy of the fault snapshot, publishes it, and
// wakes every message waiting on the old one.
func (n *Network) update(change func(f *faults)) {
	n.faultMu.Lock()
	defer n.faultMu.Unlock()
	old := n.faults.Load()
	next := old.clone()
	change(next)
	n.faults.Store(next)
	close(old.changed)
}

// SetDown marks node as killed (down=true) or back up. Every raft RPC to or
// from a down node, and every client call to it, fails at once with
// ErrUnreachable. Heal does not undo it.
func (n *Network) SetDown(node string, down bool) {
	n.update(func(f *faults) {
		if down {
			f.down[node] = true
		} else {
			delete(f.down, node)
		}
	})
}

// Down reports whether node is marked down.
func (n *Network) Down(node string) bool {
	return n.faults.Load().down[node]
}

// Isolate cuts every link of node, in both directions: to every other node
// (including ones that appear later) and to every client.
func (n *Network) Isolate(node string) {
	n.update(func(f *faults) { f.isolated[node] = true })
}

// Partition cuts the node-node links between any two different sides, in
// both directions. Links within a side, links of nodes not named, and client
// links are left as they are. Cuts add up: Partition never restores a link;
// call Heal first to start from a clean network.
func (n *Network) Partition(sides ...[]string) {
	n.update(func(f *faults) {
		for i, side := range sides {
			for _, other := range sides[i+1:] {
				for _, a := range side {
					for _, b := range other {
						if a != b { // a node named on two sides keeps its self link
							f.cut[makeLink(a, b)] = true
						}
					}
				}
			}
		}
	})
}

// Heal restores every link (Isolate, Partition) and removes every Slow.
// Nodes marked down stay down.
func (n *Network) Heal() {
	n.update(func(f *faults) {
		clear(f.isolated)
		clear(f.cut)
		clear(f.latency)
	})
}

// Slow adds d of latency to every message to or from node: raft requests
// and responses, client requests and replies. A message between two slow
// nodes pays both latencies. d <= 0 removes it.
func (n *Network) Slow(node string, d time.Duration) {
	n.update(func(f *faults) {
		if d > 0 {
			f.latency[node] = d
		} else {
			delete(f.latency, node)
		}
	})
}

// Latency returns the latency Slow set on node.
func (n *Network) Latency(node string) time.Duration {
	return n.faults.Load().latency[node]
}

// PeerLinkUp reports whether the link between nodes a and b is up. It says
// nothing about whether the nodes themselves are down.
func (n *Network) PeerLinkUp(a, b string) bool {
	return n.faults.Load().peerLinkUp(a, b)
}

// ClientLinkUp reports whether clients can reach node over the network
// (true unless node is isolated). It says nothing about whether node is down.
func (n *Network) ClientLinkUp(node string) bool {
	return !n.faults.Load().isolated[node]
}

// CutLinks lists the node-node links currently cut, each as {a, b} with
// a < b, sorted, for display. Links of an isolated node are listed against
// every node the network knows: those that ever had a transport or are
// named in a fault.
func (n *Network) CutLinks() [][2]string {
	f := n.faults.Load()

	known := map[string]struct{}{}
	n.mu.RLock()
	for node := range n.nodes {
		known[node] = struct{}{}
	}
	n.mu.RUnlock()
	for node := range f.isolated {
		known[node] = struct{}{}
	}
	for l := range f.cut {
		known[l.a] = struct{}{}
		known[l.b] = struct{}{}
	}

	cut := map[link]bool{}
	for l := range f.cut {
		cut[l] = true
	}
	for iso := range f.isolated {
		for other := range known {
			if other != iso {
				cut[makeLink(iso, other)] = true
			}
		}
	}

	out := make([][2]string, 0, len(cut))
	for l := range cut {
		out = append(out, [2]string{l.a, l.b})
	}
	slices.SortFunc(out, func(x, y [2]string) int {
		if c := strings.Compare(x[0], y[0]); c != 0 {
			return c
		}
		return strings.Compare(x[1], y[1])
	})
	return out
}
