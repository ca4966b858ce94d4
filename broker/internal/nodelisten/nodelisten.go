// Package nodelisten puts one protocol's listener on every node of a
// cluster: node nI on a base port+I−1, open only while the node is up,
// closed with its connections when the node is killed and opened again
// when it restarts. The Kafka and SQS listeners (broker/kafkawire,
// broker/sqswire) each keep one Set; what a node's clients are served
// with is theirs to say, through Start.
package nodelisten

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/mqlab/mqlab/broker"
)

// Cluster is what a Set needs of a cluster; *broker.Cluster is one.
type Cluster interface {
	Nodes() []string
	NodeUp(node string) bool
	WatchNodes(fn func(node string, up bool)) (stop func())
	Report(e broker.Event)
}

// Config says where the nodes listen.
type Config struct {
	// Protocol names the protocol in what a Set says: "Kafka" gives
	// errors starting "kafka listen:" and events saying a node "could not
	// listen for Kafka clients again".
	Protocol string
	// Host is the address every node binds (default 127.0.0.1).
	Host string
	// Port is n1's port; node nI listens on Port+I−1. Port 0 or below
	// picks a free port each time a node's listener opens.
	Port int
	// KeepHost makes a node's address Host as given with the port it
	// bound ("localhost:9324"), rather than the listener's own address
	// ("127.0.0.1:9324").
	KeepHost bool
}

// Start begins serving node's clients on a listener just opened. The Set
// runs serve on a goroutine of its own, which Close waits for, and calls
// stop, under its lock, when the node is killed or the Set closes: stop
// closes ln and drops the connections it accepted, so that serve
// returns.
type Start func(node string, ln net.Listener) (serve, stop func())

// Set is the listeners of every node of one cluster.
type Set struct {
	c       Cluster
	cfg     Config
	start   Start
	nodes   []string
	unwatch func()

	mu     sync.Mutex
	closed bool
	addrs  map[string]string // node → its address, kept across kills
	stops  map[string]func() // node → how to stop its open listener
	wg     sync.WaitGroup
}

// New checks that every node has a port and works out their addresses;
// no listener opens until Open.
func New(c Cluster, cfg Config, start Start) (*Set, error) {
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	nodes := c.Nodes()
	if cfg.Port > 0 && cfg.Port+len(nodes)-1 > 65535 {
		return nil, fmt.Errorf("%s listen: port=%d leaves no room for %d nodes; want a port up to %d", strings.ToLower(cfg.Protocol), cfg.Port, len(nodes), 65536-len(nodes))
	}
	s := &Set{c: c, cfg: cfg, start: start, nodes: nodes, addrs: map[string]string{}, stops: map[string]func(){}}
	for i, id := range nodes {
		port := 0
		if cfg.Port > 0 {
			port = cfg.Port + i
		}
		s.addrs[id] = net.JoinHostPort(cfg.Host, strconv.Itoa(port))
	}
	return s, nil
}

// Open opens the listener of every node that is up and keeps them in
// step with kills and restarts until Close. If a listener does not open
// it says why; those that did stay open until Close.
func (s *Set) Open() error {
	s.mu.Lock()
	for _, id := range s.nodes {
		if !s.c.NodeUp(id) {
			continue
		}
		if err := s.openLocked(id); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	s.mu.Unlock()
	s.unwatch = s.c.WatchNodes(s.nodeChanged)
	return nil
}

// openLocked opens node's listener and starts serving it.
func (s *Set) openLocked(node string) error {
	ln, err := net.Listen("tcp", s.addrs[node])
	if err != nil {
		return fmt.Errorf("%s listen: %s on %s: %w", strings.ToLower(s.cfg.Protocol), node, s.addrs[node], err)
	}
	if s.cfg.KeepHost {
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		s.addrs[node] = net.JoinHostPort(s.cfg.Host, port)
	} else {
		s.addrs[node] = ln.Addr().String()
	}
	serve, stop := s.start(node, ln)
	s.stops[node] = stop
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		serve()
	}()
	return nil
}

// closeLocked stops node's listener, if open.
func (s *Set) closeLocked(node string) {
	if stop := s.stops[node]; stop != nil {
		delete(s.stops, node)
		stop()
	}
}

func (s *Set) nodeChanged(node string, up bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if !up {
		s.closeLocked(node)
		return
	}
	if s.stops[node] == nil {
		if err := s.openLocked(node); err != nil {
			s.c.Report(broker.Event{Node: node, Text: fmt.Sprintf("%s could not listen for %s clients again: %v", node, s.cfg.Protocol, err)})
		}
	}
}

// Addr is node's listening address ("" for an unknown node). A node that
// is down keeps the address it last had.
func (s *Set) Addr(node string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addrs[node]
}

// Listening says whether node's listener is open.
func (s *Set) Listening(node string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stops[node] != nil
}

// Close stops following the nodes, stops every open listener and waits
// for their serve goroutines to return.
func (s *Set) Close() {
	if s.unwatch != nil {
		s.unwatch()
	}
	s.mu.Lock()
	s.closed = true
	for node := range s.stops {
		s.closeLocked(node)
	}
	s.mu.Unlock()
	s.wg.Wait()
}
