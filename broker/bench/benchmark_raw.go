package bench

// Raw raft, the yardstick: the same cluster shape and entry size as the
// broker's produce phase, with a state machine that only counts.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/internal/probe"
	"github.com/mqlab/mqlab/broker/partlog"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// RawProduceEntry encodes one batch the way a partition leader does:
// Batch messages of ValueBytes, stamped with the leader's clock,
// with a producer id and sequence when idempotent.
func RawProduceEntry(idempotent bool) []byte {
	now := time.Now().UnixNano()
	batch := partlog.Batch{Records: make([]partlog.Record, Batch)}
	if idempotent {
		batch.ProducerID, batch.BaseSeq = 2, 1<<20 // ids and sequences of a long run
	}
	for i, v := range benchValues(0) {
		batch.Records[i] = partlog.Record{Value: v, Timestamp: now}
	}
	return probe.EncodeProduce(1<<20, now, batch)
}

// countFSM is the raw-raft side's state machine: it only counts.
type countFSM struct{ n atomic.Uint64 }

func (f *countFSM) Apply(*raft.Log) any { return f.n.Add(1) }

func (f *countFSM) Snapshot() (raft.FSMSnapshot, error) { return countSnapshot(f.n.Load()), nil }

func (f *countFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var buf [8]byte
	if _, err := io.ReadFull(rc, buf[:]); err != nil {
		return err
	}
	f.n.Store(binary.BigEndian.Uint64(buf[:]))
	return nil
}

type countSnapshot uint64

func (s countSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(binary.BigEndian.AppendUint64(nil, uint64(s))); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (countSnapshot) Release() {}

// rawCluster is bare raft groups of Nodes members each, on one raftnet
// network, configured exactly like the broker's replicas.
type rawCluster struct {
	groups [][]*raft.Raft
}

// startRawCluster starts groups raft groups whose members' state
// machines newFSM makes (nil: one that only counts).
func startRawCluster(groups int, newFSM func(g int, node string) (raft.FSM, error)) (*rawCluster, error) {
	net := raftnet.New(raftnet.Options{RPCTimeout: broker.FastTiming.RPCTimeout})
	rc := &rawCluster{}
	for g := range groups {
		group := fmt.Sprintf("raw/%d", g)
		var servers []raft.Server
		for i := 1; i <= Nodes; i++ {
			id := fmt.Sprintf("n%d", i)
			servers = append(servers, raft.Server{ID: raft.ServerID(id), Address: raftnet.Addr(id, group)})
		}
		var members []*raft.Raft
		for _, s := range servers {
			node := string(s.ID)
			trans, err := net.Transport(node, group)
			if err != nil {
				rc.groups = append(rc.groups, members)
				rc.shutdown()
				return nil, err
			}
			// The broker's own raft configuration, so the two sides cannot drift apart.
			conf := probe.FastRaftConfig(node)
			logs, stable, snaps := raft.NewInmemStore(), raft.NewInmemStore(), raft.NewInmemSnapshotStore()
			err = raft.BootstrapCluster(conf, logs, stable, snaps, trans, raft.Configuration{Servers: servers})
			var fsm raft.FSM = &countFSM{}
			if err == nil && newFSM != nil {
				fsm, err = newFSM(g, node)
			}
			var r *raft.Raft
			if err == nil {
				r, err = raft.NewRaft(conf, fsm, logs, stable, snaps, trans)
			}
			if err != nil {
				trans.Close()
				rc.groups = append(rc.groups, members)
				rc.shutdown()
				return nil, fmt.Errorf("raw raft group %d on %s: %w", g, node, err)
			}
			members = append(members, r)
		}
		rc.groups = append(rc.groups, members)
	}
	return rc, nil
}

// leader waits for group g to have a leader.
func (rc *rawCluster) leader(ctx context.Context, g int) (*raft.Raft, error) {
	var lead *raft.Raft
	err := probe.Poll(ctx, func() bool {
		for _, r := range rc.groups[g] {
			if r.State() == raft.Leader {
				lead = r
				return true
			}
		}
		return false
	})
	return lead, err
}

func (rc *rawCluster) shutdown() {
	var wg sync.WaitGroup
	for _, members := range rc.groups {
		for _, r := range members {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.Shutdown().Error() // closes the transport too
			}()
		}
	}
	wg.Wait()
}

// RawRaft times batches raft.Apply calls of entry on groups bare raft
// groups of Nodes members (the broker's raft configuration and
// network, an FSM that only counts), from benchWorkers goroutines that
// each wait for an apply's future before the next, as the broker's
// producers wait for their acks; worker w applies its k-th entry to group
// (w+k) mod groups. A worker that finds the leader gone looks for the new
// one and applies again, as the broker's producer would retry.
func RawRaft(ctx context.Context, groups, batches int, entry []byte) (Rate, error) {
	return rawRaft(ctx, groups, batches, entry, false, nil)
}

// RawRaftFresh is RawRaft with each apply given a new copy of entry, as a
// broker's entries are: a client's bytes arrive in new memory, and a log
// keeps them. RawRaft applies the one buffer again and again, which no
// broker could, and on a machine where the first touch of new memory is
// slow the copy costs more than the rest of an apply.
func RawRaftFresh(ctx context.Context, groups, batches int, entry []byte) (Rate, error) {
	return rawRaft(ctx, groups, batches, entry, true, nil)
}

func rawRaft(ctx context.Context, groups, batches int, entry []byte, fresh bool, newFSM func(g int, node string) (raft.FSM, error)) (Rate, error) {
	rc, err := startRawCluster(groups, newFSM)
	if err != nil {
		return Rate{}, err
	}
	defer rc.shutdown()
	wctx, cancel := context.WithTimeout(ctx, benchWait)
	defer cancel()
	leaders := make([]atomic.Pointer[raft.Raft], groups)
	for g := range groups {
		lead, err := rc.leader(wctx, g)
		if err != nil {
			return Rate{}, fmt.Errorf("raw raft group %d: no leader: %w", g, err)
		}
		if err := lead.Barrier(broker.FastTiming.RequestTimeout).Error(); err != nil {
			return Rate{}, fmt.Errorf("raw raft group %d: barrier: %w", g, err)
		}
		leaders[g].Store(lead)
	}
	apply := func(w, k int) error {
		g := (w + k) % groups
		for {
			data := entry
			if fresh {
				data = append(make([]byte, 0, len(entry)), entry...)
			}
			err := leaders[g].Load().Apply(data, broker.FastTiming.RequestTimeout).Error()
			if err == nil {
				return nil
			}
			if !errors.Is(err, raft.ErrNotLeader) && !errors.Is(err, raft.ErrLeadershipLost) &&
				!errors.Is(err, raft.ErrLeadershipTransferInProgress) && !errors.Is(err, raft.ErrEnqueueTimeout) {
				return fmt.Errorf("group %d: %w", g, err)
			}
			lead, lerr := rc.leader(wctx, g)
			if lerr != nil {
				return fmt.Errorf("group %d: %v; then no leader: %w", g, err, lerr)
			}
			leaders[g].Store(lead)
		}
	}
	if _, err := runWorkers(ctx, benchWorkers*max(benchWarmup, groups), apply, nil); err != nil {
		return Rate{}, fmt.Errorf("warm-up: %w", err)
	}
	return runWorkers(ctx, batches, apply, nil)
}
