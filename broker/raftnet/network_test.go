package raftnet

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// register gives node a transport so the network knows it (for CutLinks).
func register(t *testing.T, n *Network, nodes ...string) {
	t.Helper()
	for _, node := range nodes {
		tr, err := n.Transport(node, "g0")
		if err != nil {
			t.Fatalf("Transport(%s): %v", node, err)
		}
		t.Cleanup(func() { _ = tr.Close() })
	}
}

// callOK makes a call that should get through and run fn.
func callOK(t *testing.T, n *Network, client, node string, kind RequestKind) {
	t.Helper()
	ran := false
	if err := n.Call(context.Background(), client, node, kind, func() error { ran = true; return nil }); err != nil {
		t.Fatalf("Call(%s -> %s, %v): %v", client, node, kind, err)
	}
	if !ran {
		t.Fatalf("Call(%s -> %s, %v): fn did not run", client, node, kind)
	}
}

// callUnreachable makes a call that should fail with ErrUnreachable without
// running fn.
func callUnreachable(t *testing.T, n *Network, client, node string) {
	t.Helper()
	ran := false
	err := n.Call(context.Background(), client, node, RequestData, func() error { ran = true; return nil })
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Call(%s -> %s) = %v, want ErrUnreachable", client, node, err)
	}
	if ran {
		t.Fatalf("Call(%s -> %s): fn ran on an unreachable node", client, node)
	}
}

func TestAddr(t *testing.T) {
	addr := Addr("n1", "orders-0")
	if addr != "n1/orders-0" {
		t.Fatalf("Addr = %q", addr)
	}
	if node, group := SplitAddr(addr); node != "n1" || group != "orders-0" {
		t.Fatalf("SplitAddr(%q) = %q, %q", addr, node, group)
	}
	if node, group := SplitAddr("n1/a/b"); node != "n1" || group != "a/b" {
		t.Fatalf("SplitAddr(n1/a/b) = %q, %q", node, group)
	}
	if node, group := SplitAddr("lonely"); node != "lonely" || group != "" {
		t.Fatalf("SplitAddr(lonely) = %q, %q", node, group)
	}
}

func TestIsolateCutsPeersAndClients(t *testing.T) {
	n := New(Options{})
	register(t, n, "n1", "n2", "n3")

	n.Isolate("n1")

	for _, peer := range []string{"n2", "n3"} {
		if n.PeerLinkUp("n1", peer) || n.PeerLinkUp(peer, "n1") {
			t.Errorf("link n1-%s still up after Isolate(n1)", peer)
		}
	}
	if !n.PeerLinkUp("n2", "n3") {
		t.Error("link n2-n3 cut by Isolate(n1)")
	}
	if !n.PeerLinkUp("n1", "n1") {
		t.Error("n1 cannot reach itself")
	}
	if n.ClientLinkUp("n1") {
		t.Error("client link to n1 still up after Isolate(n1)")
	}
	if !n.ClientLinkUp("n2") {
		t.Error("client link to n2 cut by Isolate(n1)")
	}
	callUnreachable(t, n, "c1", "n1")
	callOK(t, n, "c1", "n2", RequestData)

	want := [][2]string{{"n1", "n2"}, {"n1", "n3"}}
	if got := n.CutLinks(); !slices.Equal(got, want) {
		t.Errorf("CutLinks = %v, want %v", got, want)
	}
}

func TestPartitionCutsOnlyBetweenSides(t *testing.T) {
	n := New(Options{})
	register(t, n, "n1", "n2", "n3", "n4")

	n.Partition([]string{"n3"}, []string{"n1", "n2"})

	for _, c := range []struct {
		a, b string
		up   bool
	}{
		{"n1", "n3", false},
		{"n3", "n2", false},
		{"n1", "n2", true},
		{"n4", "n1", true}, // not named: keeps its links
		{"n4", "n3", true},
	} {
		if got := n.PeerLinkUp(c.a, c.b); got != c.up {
			t.Errorf("PeerLinkUp(%s, %s) = %v, want %v", c.a, c.b, got, c.up)
		}
	}
	for _, node := range []string{"n1", "n2", "n3", "n4"} {
		if !n.ClientLinkUp(node) {
			t.Errorf("client link to %s cut by Partition", node)
		}
		callOK(t, n, "c1", node, RequestData)
	}
	want := [][2]string{{"n1", "n3"}, {"n2", "n3"}}
	if got := n.CutLinks(); !slices.Equal(got, want) {
		t.Errorf("CutLinks = %v, want %v", got, want)
	}

	// Odd input must not panic or cut a node off from itself.
	n.Partition([]string{"n1", "n4"}, nil, []string{"n4"})
	if !n.PeerLinkUp("n4", "n4") || n.PeerLinkUp("n1", "n4") {
		t.Error("Partition with a node on two sides misbehaved")
	}
}

func TestHealRestoresLinksButNotDown(t *testing.T) {
	n := New(Options{})
	register(t, n, "n1", "n2", "n3")

	n.Isolate("n1")
	n.Partition([]string{"n2"}, []string{"n3"})
	n.Slow("n2", time.Second)
	n.SetDown("n3", true)

	n.Heal()

	if got := n.CutLinks(); len(got) != 0 {
		t.Errorf("CutLinks after Heal = %v", got)
	}
	if !n.PeerLinkUp("n1", "n2") || !n.PeerLinkUp("n2", "n3") || !n.ClientLinkUp("n1") {
		t.Error("links still cut after Heal")
	}
	if d := n.Latency("n2"); d != 0 {
		t.Errorf("Latency(n2) after Heal = %v", d)
	}
	if !n.Down("n3") {
		t.Error("Heal brought n3 back up")
	}
	callUnreachable(t, n, "c1", "n3")
	callOK(t, n, "c1", "n1", RequestData)

	n.SetDown("n3", false)
	callOK(t, n, "c1", "n3", RequestData)
}

func TestSetDownFailsFast(t *testing.T) {
	n := New(Options{})
	n.SetDown("n1", true)
	start := time.Now()
	callUnreachable(t, n, "c1", "n1")
	if el := time.Since(start); el > time.Second {
		t.Errorf("call to a down node took %v", el)
	}
	if !n.ClientLinkUp("n1") {
		t.Error("SetDown cut the client link; it should only mark the node down")
	}
}

func TestSlowAddsLatency(t *testing.T) {
	n := New(Options{})
	const d = 30 * time.Millisecond
	n.Slow("n1", d)
	if got := n.Latency("n1"); got != d {
		t.Fatalf("Latency = %v, want %v", got, d)
	}

	start := time.Now()
	var ranAt time.Duration
	err := n.Call(context.Background(), "c1", "n1", RequestMetadata, func() error {
		ranAt = time.Since(start)
		return nil
	})
	total := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if ranAt < d {
		t.Errorf("fn ran after %v, want >= %v (request latency)", ranAt, d)
	}
	if total < 2*d {
		t.Errorf("call took %v, want >= %v (request and reply latency)", total, 2*d)
	}

	n.Slow("n1", 0)
	if got := n.Latency("n1"); got != 0 {
		t.Errorf("Latency after Slow(0) = %v", got)
	}
}

func TestCallErrorPassesThrough(t *testing.T) {
	n := New(Options{})
	boom := errors.New("boom")
	if err := n.Call(context.Background(), "c1", "n1", RequestData, func() error { return boom }); err != boom {
		t.Fatalf("Call = %v, want fn's own error", err)
	}
	if err := n.Call(context.Background(), "c1", "n1", RequestData, nil); err == nil {
		t.Fatal("Call with nil fn succeeded")
	}
}

func TestCallRespectsContext(t *testing.T) {
	n := New(Options{})
	n.Slow("n1", time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	ran := false
	err := n.Call(ctx, "c1", "n1", RequestData, func() error { ran = true; return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Call = %v, want DeadlineExceeded", err)
	}
	if ran {
		t.Error("fn ran although the request never arrived")
	}
}

func TestCutDuringLatencyFailsPromptly(t *testing.T) {
	n := New(Options{})
	n.Slow("n1", time.Minute)
	var ran atomic.Bool
	done := make(chan error, 1)
	go func() {
		done <- n.Call(context.Background(), "c1", "n1", RequestData, func() error { ran.Store(true); return nil })
	}()
	n.Isolate("n1")
	select {
	case err := <-done:
		if !errors.Is(err, ErrUnreachable) {
			t.Fatalf("Call = %v, want ErrUnreachable", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Call still waiting out latency after its link was cut")
	}
	if ran.Load() {
		t.Error("fn ran although the link was cut")
	}
}

func TestDropReplyRunsFnOnce(t *testing.T) {
	n := New(Options{})
	n.DropNext("c1", DropReply)
	n.DropNext("c1", DropReply) // already armed: still one shot
	if got := n.Armed("c1"); !slices.Equal(got, []DropKind{DropReply}) {
		t.Fatalf("Armed = %v", got)
	}

	callOK(t, n, "c2", "n1", RequestData)     // another client: unaffected
	callOK(t, n, "c1", "n1", RequestMetadata) // metadata: never dropped
	if got := n.Armed("c1"); len(got) != 1 {
		t.Fatalf("arm consumed by a request it does not apply to: %v", got)
	}

	ran := 0
	err := n.Call(context.Background(), "c1", "n1", RequestData, func() error { ran++; return nil })
	if !errors.Is(err, ErrReplyLost) {
		t.Fatalf("Call = %v, want ErrReplyLost", err)
	}
	if ran != 1 {
		t.Fatalf("fn ran %d times, want 1: the node does the work", ran)
	}
	if got := n.Armed("c1"); len(got) != 0 {
		t.Fatalf("Armed after use = %v", got)
	}
	callOK(t, n, "c1", "n1", RequestData)

	// DropReply also applies to ack requests.
	n.DropNext("c1", DropReply)
	ran = 0
	err = n.Call(context.Background(), "c1", "n1", RequestAck, func() error { ran++; return nil })
	if !errors.Is(err, ErrReplyLost) || ran != 1 {
		t.Fatalf("ack with DropReply armed: err %v, ran %d", err, ran)
	}
}

// A request the node refuses is answered: the armed DropReply waits for
// the reply to work the node did.
func TestDropReplyWaitsForWorkDone(t *testing.T) {
	n := New(Options{})
	n.DropNext("c1", DropReply)
	refused := errors.New("not the leader")
	if err := n.Call(context.Background(), "c1", "n2", RequestData, func() error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("a refused request: %v; want its own error, not a lost reply", err)
	}
	if got := n.Armed("c1"); !slices.Equal(got, []DropKind{DropReply}) {
		t.Fatalf("after a refused request, armed %v; want DropReply still armed", got)
	}
	ran := 0
	if err := n.Call(context.Background(), "c1", "n1", RequestData, func() error { ran++; return nil }); !errors.Is(err, ErrReplyLost) || ran != 1 {
		t.Fatalf("the next request: err %v, ran %d; want its reply lost after it ran once", err, ran)
	}
	if got := n.Armed("c1"); len(got) != 0 {
		t.Fatalf("armed after use: %v", got)
	}
}

func TestDropAckSkipsFnOnce(t *testing.T) {
	n := New(Options{})
	n.DropNext("c1", DropAck)

	callOK(t, n, "c1", "n1", RequestData) // not an ack: unaffected
	if got := n.Armed("c1"); !slices.Equal(got, []DropKind{DropAck}) {
		t.Fatalf("Armed = %v", got)
	}

	ran := false
	err := n.Call(context.Background(), "c1", "n1", RequestAck, func() error { ran = true; return nil })
	if !errors.Is(err, ErrRequestLost) {
		t.Fatalf("Call = %v, want ErrRequestLost", err)
	}
	if ran {
		t.Fatal("fn ran although the request was lost")
	}
	callOK(t, n, "c1", "n1", RequestAck)
}

// DropAcks loses every ack request until Disarm, however many come, and
// counts them; data requests pass, and another client's acks too.
func TestDropAcksUntilDisarm(t *testing.T) {
	n := New(Options{})
	n.DropNext("c1", DropAcks)
	callOK(t, n, "c1", "n1", RequestData)
	callOK(t, n, "c2", "n1", RequestAck)
	for i := range 3 {
		ran := false
		err := n.Call(context.Background(), "c1", "n1", RequestAck, func() error { ran = true; return nil })
		if !errors.Is(err, ErrRequestLost) || ran {
			t.Fatalf("ack %d with DropAcks armed: err %v, ran %v; want ErrRequestLost, not run", i+1, err, ran)
		}
	}
	if got, lost := n.Armed("c1"), n.LostAcks("c1"); !slices.Equal(got, []DropKind{DropAcks}) || lost != 3 {
		t.Fatalf("after three acks: armed %v, lost %d; want [drop-acks], 3", got, lost)
	}
	n.Disarm("c1")
	callOK(t, n, "c1", "n1", RequestAck)
	if lost := n.LostAcks("c1"); lost != 3 {
		t.Fatalf("lost %d after Disarm; want still 3", lost)
	}
}

func TestDropAckBeforeDropReply(t *testing.T) {
	n := New(Options{})
	n.DropNext("c1", DropAck)
	n.DropNext("c1", DropReply)
	if got := n.Armed("c1"); !slices.Equal(got, []DropKind{DropReply, DropAck}) {
		t.Fatalf("Armed = %v", got)
	}
	if err := n.Call(context.Background(), "c1", "n1", RequestAck, func() error { return nil }); !errors.Is(err, ErrRequestLost) {
		t.Fatalf("first ack = %v, want ErrRequestLost", err)
	}
	if err := n.Call(context.Background(), "c1", "n1", RequestAck, func() error { return nil }); !errors.Is(err, ErrReplyLost) {
		t.Fatalf("second ack = %v, want ErrReplyLost", err)
	}
	callOK(t, n, "c1", "n1", RequestAck)

	n.DropNext("c1", DropKind(42)) // unknown: ignored
	n.DropNext("c1", DropAck)
	n.Disarm("c1")
	if got := n.Armed("c1"); len(got) != 0 {
		t.Fatalf("Armed after Disarm = %v", got)
	}
}

func TestMetadataNeverDropped(t *testing.T) {
	n := New(Options{})
	n.DropNext("c1", DropReply)
	n.DropNext("c1", DropAck)
	for range 3 {
		callOK(t, n, "c1", "n1", RequestMetadata)
	}
	if got := n.Armed("c1"); len(got) != 2 {
		t.Fatalf("metadata consumed an arm: %v", got)
	}
}

func TestArmNotConsumedWhenUnreachable(t *testing.T) {
	n := New(Options{})
	n.DropNext("c1", DropReply)
	n.SetDown("n1", true)
	callUnreachable(t, n, "c1", "n1")
	if got := n.Armed("c1"); len(got) != 1 {
		t.Fatalf("unreachable call consumed the arm: %v", got)
	}
}

func TestOnDropReportsTheFaultThatBit(t *testing.T) {
	type bite struct {
		client, node string
		kind         RequestKind
		drop         DropKind
	}
	var got []bite
	n := New(Options{OnDrop: func(client, node string, kind RequestKind, drop DropKind) {
		got = append(got, bite{client, node, kind, drop})
	}})
	ctx := context.Background()
	ok := func() error { return nil }
	n.DropNext("c1", DropReply)
	n.DropNext("c1", DropAck)
	_ = n.Call(ctx, "c1", "n2", RequestMetadata, ok) // never dropped, so not reported
	_ = n.Call(ctx, "c1", "n2", RequestAck, ok)      // the ack is lost first
	_ = n.Call(ctx, "c1", "n3", RequestData, ok)     // then the reply
	_ = n.Call(ctx, "c1", "n3", RequestData, ok)     // nothing armed any more
	want := []bite{{"c1", "n2", RequestAck, DropAck}, {"c1", "n3", RequestData, DropReply}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("OnDrop saw %+v, want %+v", got, want)
	}
}
