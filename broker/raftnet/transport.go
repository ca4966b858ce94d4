package raftnet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// consumerBuffer is how many RPCs may wait for a replica's raft loop before
// senders block (and, past RPCTimeout, fail).
const consumerBuffer = 16

// Transport is one raft replica's endpoint on a Network: group on node.
//
// It implements raft.Transport, raft.WithPreVote (without it raft silently
// turns pre-vote off) and raft.WithClose.
//
// Heartbeats: SetHeartbeatHandler is accepted and ignored; heartbeats travel
// through the Consumer channel like every other RPC. That keeps all of a
// replica's RPC handling on raft's main goroutine (raft's fast path runs its
// handler concurrently with that loop, which only NetworkTransport
// exercises), and keeps heartbeats subject to the same faults and ordering as
// everything else. The cost: a heartbeat queues behind whatever RPC the
// replica's raft loop is handling (microseconds with in-memory stores).
//
// Pipelining: AppendEntriesPipeline returns
// raft.ErrPipelineReplicationNotSupported, so raft replicates with plain
// AppendEntries calls (batched up to MaxAppendEntries). Raft then needs no
// extra goroutine per follower here, and each RPC sees the faults in force
// when it is sent.
type Transport struct {
	net      *Network
	node     string
	group    string
	addr     raft.ServerAddress
	consumer chan raft.RPC

	closeOnce sync.Once
	closed    chan struct{} // closed by Close

	log exchangeLog // the last RPC of each kind to each peer (exchanges.go)
}

// Compile-time checks: pre-vote must stay on, and raft closes us on shutdown.
var (
	_ raft.Transport   = (*Transport)(nil)
	_ raft.WithPreVote = (*Transport)(nil)
	_ raft.WithClose   = (*Transport)(nil)
)

// Transport registers and returns a new endpoint for group's replica on
// node, at address Addr(node, group). It fails with ErrAddrInUse if an open
// transport already has that address (a closed one frees it, so a restarted
// replica can register again), and with ErrBadAddress for an empty name or a
// node name containing "/".
func (n *Network) Transport(node, group string) (*Transport, error) {
	if node == "" || group == "" || strings.Contains(node, "/") {
		return nil, fmt.Errorf("raftnet: transport for node %q group %q: %w", node, group, ErrBadAddress)
	}
	addr := Addr(node, group)

	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.endpoints[addr]; ok {
		return nil, fmt.Errorf("raftnet: transport %s: %w", addr, ErrAddrInUse)
	}
	t := &Transport{
		net:      n,
		node:     node,
		group:    group,
		addr:     addr,
		consumer: make(chan raft.RPC, consumerBuffer),
		closed:   make(chan struct{}),
	}
	n.endpoints[addr] = t
	n.nodes[node] = struct{}{}
	return t, nil
}

// lookup returns the open transport at addr, or nil.
func (n *Network) lookup(addr raft.ServerAddress) *Transport {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.endpoints[addr]
}

// Node returns the node this transport belongs to.
func (t *Transport) Node() string { return t.node }

// Group returns the raft group this transport belongs to.
func (t *Transport) Group() string { return t.group }

// Consumer implements raft.Transport. The channel is never closed: raft stops
// reading it on shutdown, and a closed channel would hand raft's loop an
// endless stream of empty RPCs.
func (t *Transport) Consumer() <-chan raft.RPC { return t.consumer }

// LocalAddr implements raft.Transport.
func (t *Transport) LocalAddr() raft.ServerAddress { return t.addr }

// SetHeartbeatHandler implements raft.Transport. It is deliberately a no-op:
// heartbeats go through Consumer (see the Transport doc).
func (t *Transport) SetHeartbeatHandler(func(rpc raft.RPC)) {}

// EncodePeer implements raft.Transport.
func (t *Transport) EncodePeer(_ raft.ServerID, addr raft.ServerAddress) []byte {
	return []byte(addr)
}

// DecodePeer implements raft.Transport.
func (t *Transport) DecodePeer(buf []byte) raft.ServerAddress {
	return raft.ServerAddress(buf)
}

// AppendEntriesPipeline implements raft.Transport; pipelining is not
// supported (see the Transport doc). The sentinel is returned unwrapped
// because raft compares it with ==.
func (t *Transport) AppendEntriesPipeline(raft.ServerID, raft.ServerAddress) (raft.AppendPipeline, error) {
	return nil, raft.ErrPipelineReplicationNotSupported
}

// AppendEntries implements raft.Transport.
func (t *Transport) AppendEntries(_ raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	return call(t, "AppendEntries", target, args, resp, nil)
}

// RequestVote implements raft.Transport.
func (t *Transport) RequestVote(_ raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	return call(t, "RequestVote", target, args, resp, nil)
}

// RequestPreVote implements raft.WithPreVote.
func (t *Transport) RequestPreVote(_ raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	return call(t, "RequestPreVote", target, args, resp, nil)
}

// InstallSnapshot implements raft.Transport. The snapshot is read into
// memory before it is sent, so the sender's reader is done with when the
// receiver starts, and a receiver that gives up midway cannot stall it.
func (t *Transport) InstallSnapshot(_ raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	if data == nil {
		data = bytes.NewReader(nil)
	}
	return call(t, "InstallSnapshot", target, args, resp, data)
}

// TimeoutNow implements raft.Transport.
func (t *Transport) TimeoutNow(_ raft.ServerID, target raft.ServerAddress, args *raft.TimeoutNowRequest, resp *raft.TimeoutNowResponse) error {
	return call(t, "TimeoutNow", target, args, resp, nil)
}

// Close implements raft.WithClose. It unregisters the endpoint, so calls to
// it fail at once with ErrUnreachable, and fails calls in flight to or from
// it. It is idempotent: raft's Shutdown closes the transport too.
func (t *Transport) Close() error {
	t.closeOnce.Do(func() {
		t.net.mu.Lock()
		// A newer transport may hold the address by now; leave it alone.
		if t.net.endpoints[t.addr] == t {
			delete(t.net.endpoints, t.addr)
		}
		t.net.mu.Unlock()
		close(t.closed)
	})
	return nil
}

// call sends one raft RPC and copies the response into resp, as raft
// expects. It hands the receiver a private copy of the request: after a
// timeout or a cut the receiver may still be reading it while raft, free
// again, reuses its own (the heartbeat loop does).
func call[Req, Resp any](t *Transport, name string, target raft.ServerAddress, args *Req, resp *Resp, data io.Reader) error {
	if args == nil || resp == nil {
		return fmt.Errorf("raftnet: %s %s -> %s: nil request or response", name, t.addr, target)
	}
	req := *args
	start := time.Now()
	out, err := t.roundTrip(name, target, &req, data)
	t.record(target, start, &req, out, err)
	if err != nil {
		return err
	}
	r, ok := out.(*Resp)
	if !ok || r == nil {
		return fmt.Errorf("raftnet: %s %s -> %s: unexpected response %T", name, t.addr, target, out)
	}
	*resp = *r
	return nil
}

var (
	errTargetClosed = fmt.Errorf("target transport closed: %w", ErrUnreachable)
	errNoTarget     = fmt.Errorf("no transport at that address: %w", ErrUnreachable)
)

// readSnapshot reads the bytes of an InstallSnapshot whole, so the
// sender is done with its reader before the receiver starts, and returns
// a reader of them. A small snapshot is read into memory, in a buffer
// made once at the size the request gives (growing one as io.ReadAll
// does holds it about three times over as it doubles); a large one, a
// partition's whole log, goes to a temporary file that is removed at
// once and lives while the receiver reads it.
func readSnapshot(data io.Reader, cmd any) (io.Reader, error) {
	req, ok := cmd.(*raft.InstallSnapshotRequest)
	if !ok || req.Size <= 0 {
		buf, err := io.ReadAll(data)
		return bytes.NewReader(buf), err
	}
	if req.Size <= snapshotInMemory {
		buf := make([]byte, req.Size)
		_, err := io.ReadFull(data, buf)
		return bytes.NewReader(buf), err
	}
	f, err := os.CreateTemp("", "mqlab-snapshot-")
	if err == nil && os.Remove(f.Name()) != nil {
		// A system that cannot remove an open file would keep it.
		f.Close()
		os.Remove(f.Name())
		err = errors.New("cannot remove an open file")
	}
	if err != nil {
		buf := make([]byte, min(req.Size, maxSnapshotInMemory))
		_, err := io.ReadFull(data, buf)
		return bytes.NewReader(buf), err
	}
	n, err := io.Copy(f, data)
	if err != nil {
		f.Close()
		return nil, err
	}
	return io.NewSectionReader(f, 0, n), nil
}

// snapshotInMemory is the largest snapshot readSnapshot keeps in memory
// when it can use a file; without one, it believes sizes up to
// maxSnapshotInMemory before the bytes arrive.
const (
	snapshotInMemory    = 4 << 20
	maxSnapshotInMemory = 1 << 34
)

// roundTrip carries cmd (and data, for InstallSnapshot) to target's raft
// loop and returns its response. A message between nodes a and b is delayed
// by the latency of a plus that of b, on the way there and on the way back.
// Faults are checked before sending and again whenever they change while the
// RPC is in flight; a response that arrives over a link cut meanwhile is
// dropped.
func (t *Transport) roundTrip(name string, target raft.ServerAddress, cmd any, data io.Reader) (any, error) {
	fail := func(err error) error {
		return fmt.Errorf("raftnet: %s %s -> %s: %w", name, t.addr, target, err)
	}

	select {
	case <-t.closed:
		return nil, fail(ErrClosed)
	default:
	}
	dstNode, _ := SplitAddr(target)
	f := t.net.faults.Load()
	if err := f.peerErr(t.node, dstNode); err != nil {
		return nil, fail(err) // fail fast: no point waiting out a timeout
	}
	dst := t.net.lookup(target)
	if dst == nil {
		return nil, fail(errNoTarget)
	}

	timeout := t.net.rpcTimeout
	var reader io.Reader
	if data != nil {
		var err error
		if reader, err = readSnapshot(data, cmd); err != nil {
			return nil, fail(fmt.Errorf("reading snapshot: %w", err))
		}
		timeout *= 10
	}

	// Latency is the link's, not the peer's: it delays the exchange without
	// eating into the time the peer has to answer, so a slowed node is slow,
	// not unreachable.
	timeout += 2 * (f.latency[t.node] + f.latency[dstNode])
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	x := &exchange{src: t, dst: dst, f: f, deadline: deadline.C, timeout: timeout}

	if err := x.sleep(); err != nil {
		return nil, fail(err)
	}
	respCh := make(chan raft.RPCResponse, 1) // buffered: an abandoned RPC must not block the receiver
	if err := x.deliver(raft.RPC{Command: cmd, Reader: reader, RespChan: respCh}); err != nil {
		return nil, fail(err)
	}
	resp, err := x.await(respCh)
	if err != nil {
		return nil, fail(err)
	}
	if err := x.sleep(); err != nil {
		return nil, fail(err)
	}
	if err := x.stillUp(); err != nil {
		return nil, fail(err)
	}
	if resp.Error != nil {
		return nil, fail(resp.Error)
	}
	return resp.Response, nil
}

// exchange is the state of one RPC in flight.
type exchange struct {
	src, dst *Transport
	f        *faults // the latest fault snapshot checked
	deadline <-chan time.Time
	timeout  time.Duration
}

// recheck loads the current faults after a change and reports whether the
// RPC can still get through.
func (x *exchange) recheck() error {
	x.f = x.src.net.faults.Load()
	return x.f.peerErr(x.src.node, x.dst.node)
}

// stillUp rechecks only if the faults changed since the last check.
func (x *exchange) stillUp() error {
	select {
	case <-x.f.changed:
		return x.recheck()
	default:
		return nil
	}
}

// timedOut is the error for an RPC that ran out of time.
func (x *exchange) timedOut() error {
	return fmt.Errorf("no response within %v: %w", x.timeout, ErrTimeout)
}

// sleep waits out the link latency for one message of the RPC.
func (x *exchange) sleep() error {
	d := x.f.latency[x.src.node] + x.f.latency[x.dst.node]
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			return nil
		case <-x.f.changed:
			if err := x.recheck(); err != nil {
				return err
			}
		case <-x.deadline:
			return x.timedOut()
		case <-x.src.closed:
			return ErrClosed
		case <-x.dst.closed:
			return errTargetClosed
		}
	}
}

// deliver puts the RPC on the target's consumer channel.
func (x *exchange) deliver(rpc raft.RPC) error {
	// select picks at random among ready cases; check first so a closed
	// target with room in its channel still refuses.
	select {
	case <-x.dst.closed:
		return errTargetClosed
	default:
	}
	for {
		select {
		case x.dst.consumer <- rpc:
			return nil
		case <-x.f.changed:
			if err := x.recheck(); err != nil {
				return err
			}
		case <-x.deadline:
			return x.timedOut()
		case <-x.src.closed:
			return ErrClosed
		case <-x.dst.closed:
			return errTargetClosed
		}
	}
}

// await waits for the target's raft to respond.
func (x *exchange) await(respCh <-chan raft.RPCResponse) (raft.RPCResponse, error) {
	for {
		select {
		case resp := <-respCh:
			if resp.Response == nil && resp.Error == nil {
				return resp, errors.New("empty response")
			}
			return resp, nil
		case <-x.f.changed:
			if err := x.recheck(); err != nil {
				return raft.RPCResponse{}, err
			}
		case <-x.deadline:
			return raft.RPCResponse{}, x.timedOut()
		case <-x.src.closed:
			return raft.RPCResponse{}, ErrClosed
		case <-x.dst.closed:
			return raft.RPCResponse{}, errTargetClosed
		}
	}
}
