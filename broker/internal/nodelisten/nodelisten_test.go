package nodelisten

import (
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mqlab/mqlab/broker"
)

// fakeCluster is three nodes whose ups and downs a test sets.
type fakeCluster struct {
	mu       sync.Mutex
	up       map[string]bool
	watchers map[int]func(string, bool)
	seq      int
	events   []broker.Event
}

func newFakeCluster(down ...string) *fakeCluster {
	c := &fakeCluster{up: map[string]bool{"n1": true, "n2": true, "n3": true}, watchers: map[int]func(string, bool){}}
	for _, n := range down {
		c.up[n] = false
	}
	return c
}

func (c *fakeCluster) Nodes() []string { return []string{"n1", "n2", "n3"} }

func (c *fakeCluster) NodeUp(node string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.up[node]
}

func (c *fakeCluster) WatchNodes(fn func(string, bool)) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	id := c.seq
	c.watchers[id] = fn
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.watchers, id)
	}
}

func (c *fakeCluster) Report(e broker.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, e)
}

// set kills (up false) or restarts a node and tells the watchers.
func (c *fakeCluster) set(node string, up bool) {
	c.mu.Lock()
	c.up[node] = up
	var fns []func(string, bool)
	for _, fn := range c.watchers {
		fns = append(fns, fn)
	}
	c.mu.Unlock()
	for _, fn := range fns {
		fn(node, up)
	}
}

// echo serves a listener by greeting each connection with its node's
// name, and counts the serve goroutines running.
type echo struct {
	running atomic.Int32
	started atomic.Int32
}

func (e *echo) start(node string, ln net.Listener) (serve, stop func()) {
	e.started.Add(1)
	e.running.Add(1)
	return func() {
			defer e.running.Add(-1)
			for {
				nc, err := ln.Accept()
				if err != nil {
					return
				}
				nc.Write([]byte(node))
				nc.Close()
			}
		}, func() {
			ln.Close()
		}
}

// greeting dials addr and reads what the node says.
func greeting(t *testing.T, addr string) (string, error) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	buf := make([]byte, 16)
	n, _ := nc.Read(buf)
	return string(buf[:n]), nil
}

func TestPortsFollowTheBasePort(t *testing.T) {
	var e echo
	s, err := New(newFakeCluster(), Config{Protocol: "Kafka", Port: 9092}, e.start)
	if err != nil {
		t.Fatal(err)
	}
	for i, node := range []string{"n1", "n2", "n3"} {
		if got, want := s.Addr(node), "127.0.0.1:"+strconv.Itoa(9092+i); got != want {
			t.Errorf("Addr(%s) = %q, want %q", node, got, want)
		}
	}
	if got := s.Addr("n9"); got != "" {
		t.Errorf("Addr(n9) = %q, want nothing", got)
	}
	s, err = New(newFakeCluster(), Config{Protocol: "SQS", Host: "0.0.0.0", Port: 65533}, e.start)
	if err != nil {
		t.Fatalf("the last three ports: %v", err)
	}
	if got, want := s.Addr("n3"), "0.0.0.0:65535"; got != want {
		t.Errorf("Addr(n3) = %q, want %q", got, want)
	}
	if e.started.Load() != 0 {
		t.Errorf("New opened %d listeners; only Open should", e.started.Load())
	}
}

func TestPortRange(t *testing.T) {
	var e echo
	_, err := New(newFakeCluster(), Config{Protocol: "Kafka", Port: 65534}, e.start)
	want := "kafka listen: port=65534 leaves no room for 3 nodes; want a port up to 65533"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	_, err = New(newFakeCluster(), Config{Protocol: "SQS", Port: 65535}, e.start)
	if err == nil || !strings.HasPrefix(err.Error(), "sqs listen: port=65535 ") {
		t.Errorf("err = %v, want an sqs listen error", err)
	}
}

func TestListenersFollowTheNodes(t *testing.T) {
	c := newFakeCluster("n2")
	var e echo
	s, err := New(c, Config{Protocol: "Kafka", Port: -1}, e.start)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Listening("n1") || s.Listening("n2") || !s.Listening("n3") {
		t.Fatalf("listening n1 %v n2 %v n3 %v; want n1 and n3, the nodes up", s.Listening("n1"), s.Listening("n2"), s.Listening("n3"))
	}
	n1 := s.Addr("n1")
	if host, port, _ := net.SplitHostPort(n1); host != "127.0.0.1" || port == "0" {
		t.Fatalf("n1's address is %q; want 127.0.0.1 and the port it bound", n1)
	}
	if got, err := greeting(t, n1); err != nil || got != "n1" {
		t.Fatalf("n1 said %q, %v", got, err)
	}

	c.set("n1", false)
	if s.Listening("n1") {
		t.Fatal("n1 still listens after its kill")
	}
	if _, err := greeting(t, n1); err == nil {
		t.Fatal("a killed node's port still answers")
	}
	if s.Addr("n1") != n1 {
		t.Errorf("a killed n1's address is %q, want %q kept", s.Addr("n1"), n1)
	}

	c.set("n1", true)
	if s.Addr("n1") != n1 {
		t.Errorf("n1 came back on %q, want its port %q again", s.Addr("n1"), n1)
	}
	if got, err := greeting(t, n1); err != nil || got != "n1" {
		t.Fatalf("restarted n1 said %q, %v", got, err)
	}
	c.set("n2", true)
	if got, err := greeting(t, s.Addr("n2")); err != nil || got != "n2" {
		t.Fatalf("n2, up at last, said %q, %v", got, err)
	}

	// n3's port is taken while it is down: its restart is reported.
	c.set("n3", false)
	taken, err := net.Listen("tcp", s.Addr("n3"))
	if err != nil {
		t.Skipf("could not take n3's port: %v", err)
	}
	defer taken.Close()
	c.set("n3", true)
	if s.Listening("n3") {
		t.Fatal("n3 listens on a port taken")
	}
	c.mu.Lock()
	events := append([]broker.Event(nil), c.events...)
	c.mu.Unlock()
	if len(events) != 1 || events[0].Node != "n3" ||
		!strings.HasPrefix(events[0].Text, "n3 could not listen for Kafka clients again: kafka listen: n3 on "+s.Addr("n3")+": ") {
		t.Fatalf("events = %+v, want n3's failure to listen again", events)
	}

	s.Close()
	if n := e.running.Load(); n != 0 {
		t.Errorf("%d serve goroutines run after Close", n)
	}
	c.set("n3", false)
	c.set("n3", true)
	if s.Listening("n3") {
		t.Error("a restart after Close opened a listener")
	}
}

func TestOpenFailure(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	// Only n1 is up, so only the port taken is tried.
	c := newFakeCluster("n2", "n3")
	var e echo
	s, err := New(c, Config{Protocol: "SQS", Port: port}, e.start)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Open()
	want := "sqs listen: n1 on 127.0.0.1:" + strconv.Itoa(port) + ": "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v, want it to start %q", err, want)
	}
	s.Close()
}

func TestKeepHost(t *testing.T) {
	for _, keep := range []bool{false, true} {
		var e echo
		s, err := New(newFakeCluster("n2", "n3"), Config{Protocol: "SQS", Host: "localhost", Port: -1, KeepHost: keep}, e.start)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Open(); err != nil {
			t.Fatal(err)
		}
		host, port, _ := net.SplitHostPort(s.Addr("n1"))
		s.Close()
		if port == "0" || (host == "localhost") != keep {
			t.Errorf("KeepHost %v: n1's address is %q", keep, s.Addr("n1"))
		}
	}
}
