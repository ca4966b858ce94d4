package raftnet

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// BenchmarkRoundTrip measures one AppendEntries RPC with no faults, the
// cost every heartbeat pays.
func BenchmarkRoundTrip(b *testing.B) {
	n := New(Options{})
	src, err := n.Transport("n1", "g0")
	if err != nil {
		b.Fatal(err)
	}
	dst, err := n.Transport("n2", "g0")
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	defer dst.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case rpc := <-dst.Consumer():
				rpc.Respond(&raft.AppendEntriesResponse{Success: true}, nil)
			case <-stop:
				return
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var resp raft.AppendEntriesResponse
		req := raft.AppendEntriesRequest{Term: 1}
		for pb.Next() {
			if err := src.AppendEntries("n2", dst.LocalAddr(), &req, &resp); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkCall measures the overhead Call adds to a client request.
func BenchmarkCall(b *testing.B) {
	n := New(Options{})
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := n.Call(ctx, "c1", "n1", RequestData, func() error { return nil }); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkRaftApply compares committing entries in a 3-node raft group over
// this network against raft's own InmemTransport.
func BenchmarkRaftApply(b *testing.B) {
	nodes := []string{"n1", "n2", "n3"}
	run := func(b *testing.B, transports []raft.Transport) {
		var rafts []*raft.Raft
		var servers []raft.Server
		for i, node := range nodes {
			conf := fastConfig(node, hclog.NewNullLogger())
			conf.HeartbeatTimeout = 200 * time.Millisecond
			conf.ElectionTimeout = 200 * time.Millisecond
			conf.LeaderLeaseTimeout = 200 * time.Millisecond
			r, err := raft.NewRaft(conf, &counter{}, raft.NewInmemStore(), raft.NewInmemStore(), raft.NewInmemSnapshotStore(), transports[i])
			if err != nil {
				b.Fatal(err)
			}
			rafts = append(rafts, r)
			servers = append(servers, raft.Server{ID: raft.ServerID(node), Address: transports[i].LocalAddr()})
		}
		defer func() {
			for _, r := range rafts {
				_ = r.Shutdown().Error()
			}
		}()
		if err := rafts[0].BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
			b.Fatal(err)
		}
		var leader *raft.Raft
		deadline := time.Now().Add(10 * time.Second)
		for leader == nil {
			for _, r := range rafts {
				if r.State() == raft.Leader {
					leader = r
				}
			}
			if time.Now().After(deadline) {
				b.Fatal("no leader")
			}
			time.Sleep(5 * time.Millisecond)
		}
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := leader.Apply([]byte("x"), time.Second).Error(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.Run("raftnet", func(b *testing.B) {
		n := New(Options{})
		var ts []raft.Transport
		for _, node := range nodes {
			tr, err := n.Transport(node, "bench")
			if err != nil {
				b.Fatal(err)
			}
			ts = append(ts, tr)
		}
		run(b, ts)
	})
	b.Run("inmem", func(b *testing.B) {
		var ts []*raft.InmemTransport
		for _, node := range nodes {
			_, tr := raft.NewInmemTransport(raft.ServerAddress(node))
			ts = append(ts, tr)
		}
		for _, a := range ts {
			for _, c := range ts {
				if a != c {
					a.Connect(c.LocalAddr(), c)
				}
			}
		}
		var rts []raft.Transport
		for _, tr := range ts {
			rts = append(rts, tr)
		}
		run(b, rts)
	})
}
