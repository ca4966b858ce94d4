package sqswire

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/internal/nodelisten"
)

// Cluster is what the listener needs of a cluster; *broker.Cluster is one.
type Cluster interface {
	Nodes() []string
	NodeUp(node string) bool
	WatchNodes(fn func(node string, up bool)) (stop func())
	Report(e broker.Event)
	NewQueueClient(cfg broker.QueueClientConfig) (*broker.QueueClient, error)
	CreateQueue(ctx context.Context, cfg broker.QueueConfig) error
	DeleteQueue(ctx context.Context, name, by string) (int, error)
	SnapshotWindow(window int) broker.Snapshot
	Redrive(ctx context.Context, dlq, to string) (int, error)
}

// Config says where the nodes listen.
type Config struct {
	// Host is the address every node binds (default 127.0.0.1).
	Host string
	// Port is n1's port (default 9324); node nI listens on Port+I−1. Port
	// −1 picks free ports, for tests.
	Port int
	// MaxRequestBytes bounds a request's body (default 4 MiB: ten
	// messages of 256 KiB, form-encoded).
	MaxRequestBytes int64
	// Observer, if set, hears every send answered and every receive.
	Observer Observer
}

// DefaultPort is the port SQS emulators commonly take.
const DefaultPort = 9324

// DefaultMaxRequestBytes bounds a request body unless Config says.
const DefaultMaxRequestBytes = 4 << 20

// MaxMessageBytes is SQS's largest message: 256 KiB of body and
// attributes.
const MaxMessageBytes = 256 << 10

// Account is the account id in every queue URL and ARN.
const Account = "000000000000"

// Server is the SQS listener of every node of one cluster.
type Server struct {
	c   Cluster
	cfg Config
	ls  *nodelisten.Set // every node's listener, following kills and restarts

	mu       sync.Mutex
	closed   bool
	clients  map[string]*broker.QueueClient
	extra    map[string]map[string]string // queue → the attributes the listener keeps
	ids      map[string]string            // client|invocation|entry → message id, so a retry keeps its id
	idOrder  []string
	seq      map[string]uint64    // client → the last message number it got
	said     map[string]time.Time // client|action|code → when an error answer was last reported
	handlers sync.WaitGroup
	holding  atomic.Int32 // calls held while their node is cut off
}

// Listen opens a listener for every node that is up and keeps them in
// step with kills and restarts until Close.
func Listen(c Cluster, cfg Config) (*Server, error) {
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.Port == 0 {
		cfg.Port = DefaultPort
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	s := &Server{c: c, cfg: cfg,
		clients: map[string]*broker.QueueClient{}, extra: map[string]map[string]string{}, ids: map[string]string{}, seq: map[string]uint64{}}
	ls, err := nodelisten.New(c, nodelisten.Config{Protocol: "SQS", Host: cfg.Host, Port: cfg.Port, KeepHost: true}, s.start)
	if err != nil {
		return nil, err
	}
	s.ls = ls
	if err := ls.Open(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// start serves node's listener with an HTTP server; stopping it closes
// the listener and every connection at once.
func (s *Server) start(node string, ln net.Listener) (serve, stop func()) {
	hs := &http.Server{
		Handler:           s.handler(node),
		ReadHeaderTimeout: 30 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0), // never onto the terminal the screen draws on
	}
	return func() { hs.Serve(ln) }, func() { hs.Close() }
}

// Addr is node's listening address ("" for an unknown node).
func (s *Server) Addr(node string) string { return s.ls.Addr(node) }

// Endpoint is node's endpoint URL, as a client's endpoint_url takes it;
// a node bound to every address is reached on 127.0.0.1.
func (s *Server) Endpoint(node string) string {
	host, port, err := net.SplitHostPort(s.Addr(node))
	if ip := net.ParseIP(host); err == nil && ip != nil && ip.IsUnspecified() {
		return "http://" + net.JoinHostPort("127.0.0.1", port)
	}
	return "http://" + s.Addr(node)
}

// QueueURL is the URL of a queue at node's endpoint.
func (s *Server) QueueURL(node, queue string) string {
	return s.Endpoint(node) + "/" + Account + "/" + queue
}

// Close stops every listener and connection and waits for their
// handlers.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.ls.Close()
	s.handlers.Wait()
	return nil
}

// client is the queue client that carries name's requests through node.
func (s *Server) client(node, name string) (*broker.QueueClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := node + "|" + name
	if qc := s.clients[key]; qc != nil {
		return qc, nil
	}
	if len(s.clients) >= maxClients {
		clear(s.clients) // names come from requests: keep a flood of them from growing without end
	}
	qc, err := s.c.NewQueueClient(broker.QueueClientConfig{ClientID: name, Via: node, Once: true})
	if err != nil {
		return nil, err
	}
	s.clients[key] = qc
	return qc, nil
}

// maxClients bounds the queue clients kept, one per node and client name.
const maxClients = 4096

// maxIDs bounds the message ids remembered for retries.
const maxIDs = 1 << 16

// msgID names a message a client sends. A retry of one call (the same
// amz-sdk-invocation-id, which SDKs keep across their retries) gets the
// id its first attempt got, so a message stored twice by a retry is one
// message delivered twice to the checker, as it is to the client.
func (s *Server) msgID(client, invocation, entry string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := ""
	if invocation != "" {
		key = client + "|" + invocation + "|" + entry
		if id, ok := s.ids[key]; ok {
			return id
		}
	}
	s.seq[client]++
	id := client + "~" + strconv.FormatUint(s.seq[client], 10)
	if key != "" {
		s.ids[key] = id
		s.idOrder = append(s.idOrder, key)
		if len(s.idOrder) > maxIDs {
			delete(s.ids, s.idOrder[0])
			s.idOrder = s.idOrder[1:]
		}
	}
	return id
}

// clientName names the client of a request for the fault network and the
// checker: an x-mqlab-client header, else the app/NAME an SDK's
// User-Agent carries, else the User-Agent's first product, lower-cased
// (boto3, aws-cli, aws-sdk-go-v2).
func clientName(h http.Header) string {
	if n := cleanName(h.Get("X-Mqlab-Client")); n != "" {
		return n
	}
	ua := h.Get("User-Agent")
	for _, tok := range strings.Fields(ua) {
		if app, ok := strings.CutPrefix(tok, "app/"); ok {
			if n := cleanName(app); n != "" {
				return n
			}
		}
	}
	if f := strings.Fields(ua); len(f) > 0 {
		product, _, _ := strings.Cut(f[0], "/")
		if n := cleanName(strings.ToLower(product)); n != "" {
			return n
		}
	}
	return "sqs-client"
}

func cleanName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 64 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// errAborted: the answer is lost on purpose (a lost reply, a killed node):
// the connection closes without one.
var errAborted = errors.New("answer lost")
