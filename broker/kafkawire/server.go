package kafkawire

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/internal/nodelisten"
)

// Config says where the nodes listen and how they treat clients.
type Config struct {
	// Host is the address every node binds (default 127.0.0.1).
	Host string
	// Port is n1's port (default 9092); node nI listens on Port+I−1. Port
	// −1 picks free ports, for tests.
	Port int
	// AutoCreate creates a topic a client's metadata request names, as
	// Kafka's auto.create.topics.enable does (off unless asked).
	AutoCreate bool
	// MaxRequestBytes bounds a request frame (default 100 MiB, Kafka's
	// socket.request.max.bytes).
	MaxRequestBytes int32
	// Observer, if set, hears every produce and every group member's
	// fetch.
	Observer Observer
}

// DefaultPort is Kafka's.
const DefaultPort = 9092

// DefaultMaxRequestBytes is Kafka's default socket.request.max.bytes.
const DefaultMaxRequestBytes = 100 << 20

// Client is an outside client as the nodes know it.
type Client struct {
	ID       string // its client.id
	Software string // the name and version it sent in ApiVersions, if any
	Conns    int    // open connections
}

// Broker is all the listener asks of a cluster (a *broker.Cluster): its
// nodes and news of their kills and restarts, a place to report what
// outside clients did, and each node's front, whose partition and group
// handles answer the requests.
type Broker interface {
	Nodes() []string
	NodeUp(node string) bool
	WatchNodes(fn func(node string, up bool)) (stop func())
	Report(e broker.Event)
	Front(node, client string) broker.Front
}

// Server is the Kafka listener of every node of one cluster.
type Server struct {
	c     Broker
	cfg   Config
	index map[string]int32 // node id → Kafka broker id (nI → I)
	ls    *nodelisten.Set  // every node's listener, following kills and restarts

	mu       sync.Mutex
	closed   bool
	conns    map[*conn]struct{}
	software map[string]string         // client.id → software
	wm       map[memberKey]*wireMember // the groups' members, as the server's answers made them
	gens     map[string]int            // each group's latest generation
	wg       sync.WaitGroup
}

// Listen opens a listener for every node that is up and keeps them in
// step with kills and restarts until Close.
func Listen(c Broker, cfg Config) (*Server, error) {
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.Port == 0 {
		cfg.Port = DefaultPort
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	s := &Server{c: c, cfg: cfg, index: map[string]int32{},
		conns: map[*conn]struct{}{}, software: map[string]string{},
		wm: map[memberKey]*wireMember{}, gens: map[string]int{}}
	ls, err := nodelisten.New(c, nodelisten.Config{Protocol: "Kafka", Host: cfg.Host, Port: cfg.Port}, s.start)
	if err != nil {
		return nil, err
	}
	s.ls = ls
	for i, id := range c.Nodes() {
		s.index[id] = int32(i + 1)
	}
	if err := ls.Open(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// nodeListener is one opening of a node's listener.
type nodeListener struct {
	node    string
	ln      net.Listener
	stopped bool // the node was killed or the server closed; guarded by Server.mu
}

// start serves node's listener with an accept loop; stopping it drops
// the node's connections.
func (s *Server) start(node string, ln net.Listener) (serve, stop func()) {
	l := &nodeListener{node: node, ln: ln}
	return func() { s.accept(l) }, func() { s.stopListener(l) }
}

// stopListener stops a node's listener and drops the node's connections.
func (s *Server) stopListener(l *nodeListener) {
	l.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	l.stopped = true
	for cn := range s.conns {
		if cn.node == l.node {
			cn.close("the node was killed")
		}
	}
}

func (s *Server) accept(l *nodeListener) {
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. out of file descriptors: try again shortly
			continue
		}
		s.mu.Lock()
		if s.closed || l.stopped {
			s.mu.Unlock()
			nc.Close()
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		cn := &conn{s: s, node: l.node, nc: nc, ctx: ctx, cancel: cancel, label: l.node + " from " + nc.RemoteAddr().String()}
		s.conns[cn] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go cn.serve()
	}
}

func (s *Server) forget(cn *conn) {
	s.mu.Lock()
	delete(s.conns, cn)
	s.mu.Unlock()
}

// Addr is node's listening address ("" for an unknown node).
func (s *Server) Addr(node string) string { return s.ls.Addr(node) }

// Seeds are every node's address, in node order.
func (s *Server) Seeds() []string {
	nodes := s.c.Nodes()
	out := make([]string, 0, len(nodes))
	for _, id := range nodes {
		out = append(out, s.ls.Addr(id))
	}
	return out
}

// Bootstrap is the address list a client starts from, as kcat's -b and
// bootstrap.servers take it: every node's, comma-separated.
func (s *Server) Bootstrap() string { return strings.Join(s.Seeds(), ",") }

// Clients lists the outside clients with an open connection, by client.id.
func (s *Server) Clients() []Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	by := map[string]*Client{}
	for cn := range s.conns {
		id := cn.clientID()
		if id == "" {
			continue
		}
		c := by[id]
		if c == nil {
			c = &Client{ID: id, Software: s.software[id]}
			by[id] = c
		}
		c.Conns++
	}
	out := make([]Client, 0, len(by))
	for _, c := range by {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Client) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out
}

func (s *Server) noteSoftware(client, software string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.software[client] == software {
		return false
	}
	s.software[client] = software
	return true
}

// Close stops every listener and connection and waits for them.
func (s *Server) Close() error {
	s.ls.Close()
	s.mu.Lock()
	s.closed = true
	for cn := range s.conns {
		cn.close("")
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}
