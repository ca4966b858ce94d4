package raftnet

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// responder plays a raft loop on tr: it answers each AppendEntries with
// Term+1 and each InstallSnapshot with Success if the data matches want.
// It stops when the test ends.
func responder(t *testing.T, tr *Transport, wantSnapshot []byte) {
	t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case rpc := <-tr.Consumer():
				switch cmd := rpc.Command.(type) {
				case *raft.AppendEntriesRequest:
					rpc.Respond(&raft.AppendEntriesResponse{Term: cmd.Term + 1, Success: true}, nil)
				case *raft.InstallSnapshotRequest:
					got, err := io.ReadAll(rpc.Reader)
					rpc.Respond(&raft.InstallSnapshotResponse{Success: err == nil && bytes.Equal(got, wantSnapshot)}, nil)
				default:
					rpc.Respond(nil, errors.New("unexpected command"))
				}
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() { close(stop); wg.Wait() })
}

// pair returns transports for group g0 on n1 and n2.
func pair(t *testing.T, n *Network) (a, b *Transport) {
	t.Helper()
	a, err := n.Transport("n1", "g0")
	if err != nil {
		t.Fatal(err)
	}
	b, err = n.Transport("n2", "g0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	return a, b
}

func heartbeat(a *Transport, target raft.ServerAddress) (*raft.AppendEntriesResponse, error) {
	var resp raft.AppendEntriesResponse
	err := a.AppendEntries("x", target, &raft.AppendEntriesRequest{Term: 7}, &resp)
	return &resp, err
}

func TestTransportRoundTrip(t *testing.T) {
	n := New(Options{})
	a, b := pair(t, n)
	responder(t, b, nil)

	resp, err := heartbeat(a, b.LocalAddr())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Term != 8 || !resp.Success {
		t.Fatalf("response = %+v", resp)
	}
	if a.LocalAddr() != "n1/g0" || a.Node() != "n1" || a.Group() != "g0" {
		t.Fatalf("address %q node %q group %q", a.LocalAddr(), a.Node(), a.Group())
	}
	if got := a.DecodePeer(a.EncodePeer("x", "n2/g0")); got != "n2/g0" {
		t.Fatalf("peer encoding round trip = %q", got)
	}
	if _, err := a.AppendEntriesPipeline("x", b.LocalAddr()); err != raft.ErrPipelineReplicationNotSupported {
		t.Fatalf("AppendEntriesPipeline err = %v", err)
	}
	if err := a.AppendEntries("x", b.LocalAddr(), nil, nil); err == nil {
		t.Fatal("nil request accepted")
	}
}

func TestTransportRegistration(t *testing.T) {
	n := New(Options{})
	first, err := n.Transport("n1", "g0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Transport("n1", "g0"); !errors.Is(err, ErrAddrInUse) {
		t.Fatalf("second registration err = %v, want ErrAddrInUse", err)
	}
	for _, bad := range [][2]string{{"", "g0"}, {"n1", ""}, {"n/1", "g0"}} {
		if _, err := n.Transport(bad[0], bad[1]); !errors.Is(err, ErrBadAddress) {
			t.Errorf("Transport(%q, %q) err = %v, want ErrBadAddress", bad[0], bad[1], err)
		}
	}

	_ = first.Close()
	second, err := n.Transport("n1", "g0")
	if err != nil {
		t.Fatalf("re-registering after Close: %v", err)
	}
	defer second.Close()
	_ = first.Close() // idempotent, and must not unregister its successor
	if n.lookup("n1/g0") != second {
		t.Fatal("closing the old transport again unregistered the new one")
	}
}

func TestTransportFaultsFailFast(t *testing.T) {
	n := New(Options{RPCTimeout: 10 * time.Second})
	a, b := pair(t, n)
	responder(t, b, nil)

	check := func(what string, wantErr error) {
		t.Helper()
		start := time.Now()
		_, err := heartbeat(a, b.LocalAddr())
		if !errors.Is(err, wantErr) {
			t.Fatalf("%s: err = %v, want %v", what, err, wantErr)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Fatalf("%s: took %v, should fail fast", what, el)
		}
	}

	n.SetDown("n2", true)
	check("target down", ErrUnreachable)
	n.SetDown("n2", false)
	n.SetDown("n1", true)
	check("source down", ErrUnreachable)
	n.SetDown("n1", false)

	n.Isolate("n1")
	check("source isolated", ErrUnreachable)
	n.Heal()
	n.Partition([]string{"n2"}, []string{"n1"})
	check("partitioned", ErrUnreachable)
	n.Heal()

	if _, err := heartbeat(a, b.LocalAddr()); err != nil {
		t.Fatalf("after Heal: %v", err)
	}
	if _, err := heartbeat(a, "n3/g0"); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("unregistered target: err = %v, want ErrUnreachable", err)
	}

	_ = b.Close()
	check("target closed", ErrUnreachable)
	_ = a.Close()
	check("source closed", ErrClosed)
}

func TestTransportTimeout(t *testing.T) {
	const timeout = 50 * time.Millisecond
	n := New(Options{RPCTimeout: timeout})
	a, b := pair(t, n) // nobody consumes b

	start := time.Now()
	_, err := heartbeat(a, b.LocalAddr())
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if el := time.Since(start); el < timeout {
		t.Fatalf("timed out after %v, before RPCTimeout %v", el, timeout)
	}
}

// stuck consumes RPCs on tr without answering them, reporting each one.
func stuck(t *testing.T, tr *Transport) <-chan raft.RPC {
	got := make(chan raft.RPC, consumerBuffer)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case rpc := <-tr.Consumer():
				got <- rpc
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() { close(stop); wg.Wait() })
	return got
}

func TestTransportCutInFlight(t *testing.T) {
	n := New(Options{RPCTimeout: 10 * time.Second})
	a, b := pair(t, n)
	got := stuck(t, b)

	done := make(chan error, 1)
	go func() { _, err := heartbeat(a, b.LocalAddr()); done <- err }()
	rpc := <-got // delivered, now in flight

	n.Partition([]string{"n1"}, []string{"n2"})
	rpc.Respond(&raft.AppendEntriesResponse{Success: true}, nil) // too late: the link is gone
	select {
	case err := <-done:
		if !errors.Is(err, ErrUnreachable) {
			t.Fatalf("err = %v, want ErrUnreachable", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("in-flight RPC not failed by the cut")
	}
}

func TestTransportCloseFailsInFlight(t *testing.T) {
	n := New(Options{RPCTimeout: 10 * time.Second})
	a, b := pair(t, n)
	got := stuck(t, b)

	// Target closes while the RPC waits for its answer.
	done := make(chan error, 1)
	go func() { _, err := heartbeat(a, b.LocalAddr()); done <- err }()
	<-got
	_ = b.Close()
	if err := waitErr(t, done); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("target closed in flight: err = %v, want ErrUnreachable", err)
	}

	// Source closes while its RPC waits.
	c, err := n.Transport("n3", "g0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gotC := stuck(t, c)
	go func() { _, err := heartbeat(a, c.LocalAddr()); done <- err }()
	<-gotC
	_ = a.Close()
	if err := waitErr(t, done); !errors.Is(err, ErrClosed) {
		t.Fatalf("source closed in flight: err = %v, want ErrClosed", err)
	}
}

func waitErr(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("in-flight RPC not failed by Close")
		return nil
	}
}

// A snapshot arrives intact, small (kept in memory) or large (carried in
// a temporary file).
func TestTransportInstallSnapshot(t *testing.T) {
	for _, size := range []int{8000, snapshotInMemory + 8000} {
		n := New(Options{})
		a, b := pair(t, n)
		data := bytes.Repeat([]byte("snapshot"), size/8)
		responder(t, b, data)

		var resp raft.InstallSnapshotResponse
		req := &raft.InstallSnapshotRequest{Size: int64(len(data))}
		if err := a.InstallSnapshot("x", b.LocalAddr(), req, &resp, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		if !resp.Success {
			t.Fatalf("receiver did not get the %d bytes of the snapshot intact", len(data))
		}
	}
}

func TestTransportLatency(t *testing.T) {
	n := New(Options{})
	a, b := pair(t, n)
	responder(t, b, nil)

	const d = 10 * time.Millisecond
	n.Slow("n1", d)
	n.Slow("n2", d)
	start := time.Now()
	if _, err := heartbeat(a, b.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	// Each way pays both nodes' latency.
	if el := time.Since(start); el < 4*d {
		t.Fatalf("RPC took %v, want >= %v", el, 4*d)
	}
}

// A slow link delays an RPC; it does not make the peer unreachable, even
// when the latency alone exceeds the RPC timeout.
func TestTransportLatencyBeyondTimeout(t *testing.T) {
	n := New(Options{RPCTimeout: 20 * time.Millisecond})
	a, b := pair(t, n)
	responder(t, b, nil)
	n.Slow("n2", 30*time.Millisecond)
	if _, err := heartbeat(a, b.LocalAddr()); err != nil {
		t.Fatalf("a heartbeat over a slow link failed: %v", err)
	}
}

// TestTransportConcurrentFaults hammers the transport while faults change,
// for the race detector.
func TestTransportConcurrentFaults(t *testing.T) {
	n := New(Options{RPCTimeout: time.Second})
	a, b := pair(t, n)
	responder(t, b, nil)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := heartbeat(a, b.LocalAddr())
				if err == nil && resp.Term != 8 {
					t.Errorf("response = %+v", resp)
				}
				if err != nil && !errors.Is(err, ErrUnreachable) {
					t.Errorf("unexpected error %v", err)
				}
			}
		}()
	}
	for i := range 200 {
		switch i % 4 {
		case 0:
			n.Isolate("n2")
		case 1:
			n.Heal()
		case 2:
			n.SetDown("n1", true)
		case 3:
			n.SetDown("n1", false)
		}
		_ = n.CutLinks()
	}
	close(stop)
	wg.Wait()
}
