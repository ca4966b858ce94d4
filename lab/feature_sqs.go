package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mqlab/mqlab/broker/sqswire"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/family"
)

// sqsFeature puts Amazon SQS's API on the cluster's nodes, so boto3, the
// AWS CLI and the SDKs work the lab's own queues. The listening stays on
// across cluster commands: a new cluster listens on the same ports.
type sqsFeature struct{}

// SQSState is the SQS listener as the screen shows it.
type SQSState struct {
	Endpoint string   `json:"endpoint"` // n1's
	Clients  []string `json:"clients,omitempty"`
}

func (sqsFeature) exec(ctx context.Context, r *run, cmd command.Command) error {
	switch c := cmd.(type) {
	case command.SQSListen:
		cfg := sqswire.Config{Host: c.Host, Port: c.Port}
		r.begin(c.String())
		r.w.closeSQS()
		if err := r.l.listenSQS(r.w, &cfg); err != nil {
			return err
		}
		r.l.mu.Lock()
		r.l.sqs = &cfg
		r.l.mu.Unlock()
		r.saySQS(cfg)
		return nil
	case command.SQSStop:
		r.begin(c.String())
		r.l.mu.Lock()
		was := r.l.sqs != nil
		r.l.sqs = nil
		r.l.mu.Unlock()
		r.w.closeSQS()
		if !was {
			r.say(EventOutcome, "the nodes were not listening for SQS clients")
			return nil
		}
		r.say(EventOutcome, "the nodes stopped listening for SQS clients; their connections are closed")
		return nil
	}
	return fmt.Errorf("%s: not an sqs command", cmd.Name())
}

func (r *run) saySQS(cfg sqswire.Config) {
	srv := r.w.sqsServer()
	var parts []string
	for _, n := range r.w.cluster.Nodes() {
		parts = append(parts, n+" "+srv.Endpoint(n))
	}
	first := srv.Endpoint(r.w.cluster.Nodes()[0])
	r.say(EventOutcome, "SQS API on %s; point a client at one of them, e.g. aws sqs list-queues --endpoint-url %s", strings.Join(parts, ", "), first)
	if !family.Loopback(cfg.Host) {
		r.say(EventOutcome, "warning: %s is reachable from other machines, and requests are not authenticated (signatures are accepted unchecked): anyone who can reach it can send, receive and delete", cfg.Host)
	}
}

// listenSQS starts w's SQS listener with cfg.
func (l *Lab) listenSQS(w *world, cfg *sqswire.Config) error {
	own := *cfg
	own.Observer = &w.sqsWire
	srv, err := sqswire.Listen(w.cluster, own)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%w; another program (another mqlab?) listens there: choose another port with port=", err)
		}
		return err
	}
	w.mu.Lock()
	w.sqs = srv
	w.mu.Unlock()
	return nil
}

// relistenSQS gives a new world the listener the lab had.
func (r *run) relistenSQS() {
	r.l.mu.Lock()
	cfg := r.l.sqs
	r.l.mu.Unlock()
	if cfg == nil {
		return
	}
	if err := r.l.listenSQS(r.w, cfg); err != nil {
		r.say(EventError, "the new cluster could not listen for SQS clients: %v", err)
		return
	}
	r.saySQS(*cfg)
}

func (w *world) sqsServer() *sqswire.Server {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sqs
}

func (w *world) closeSQS() {
	w.mu.Lock()
	srv := w.sqs
	w.sqs = nil
	w.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

func (w *world) sqsState() *SQSState {
	srv := w.sqsServer()
	if srv == nil {
		return nil
	}
	return &SQSState{Endpoint: srv.Endpoint(w.cluster.Nodes()[0]), Clients: w.sqsWire.clientNames()}
}

// sqsDialTimeout bounds sqs_answers' connection attempt: a refused port
// answers at once on the loopback, a live one well within it.
const sqsDialTimeout = 500 * time.Millisecond

// value reads sqs_answers(NODE): yes when NODE's SQS port takes a
// connection now, no when nothing listens there. It dials the port as a
// client would, rather than asking the listener, so a node that went on
// listening after its kill would read yes.
func (sqsFeature) value(ctx context.Context, w *world, v command.Value) (any, bool, error) {
	if v.Func == "sqs_reaches" {
		return sqsReaches(ctx, w, v)
	}
	if v.Func != "sqs_answers" {
		return nil, false, nil
	}
	nodes := w.cluster.Nodes()
	if !slices.Contains(nodes, v.Arg) {
		return nil, true, fmt.Errorf("%s: no node named %q; the nodes are %s%s", v, v.Arg, strings.Join(nodes, ", "), didYouMean(v.Arg, nodes))
	}
	srv := w.sqsServer()
	if srv == nil {
		return nil, true, fmt.Errorf("%s: the nodes are not listening for SQS clients; start them with sqs listen", v)
	}
	u, err := url.Parse(srv.Endpoint(v.Arg))
	if err != nil || u.Host == "" {
		return nil, true, fmt.Errorf("%s: %s has no SQS address", v, v.Arg)
	}
	d := net.Dialer{Timeout: sqsDialTimeout}
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return "no", true, nil
	}
	conn.Close()
	return "yes", true, nil
}

// observe adds what the SQS clients did: every send with what its client
// learned, every message a receive handed out as a delivery, and its work
// as done in the order received (an outside worker's work is its own).
func (sqsFeature) observe(_ context.Context, w *world, h *checker.History, _ *checker.Observed) error {
	s := &w.sqsWire
	s.mu.Lock()
	defer s.mu.Unlock()
	h.Sends = append(h.Sends, s.sends...)
	h.Deliveries = append(h.Deliveries, s.deliveries...)
	for _, d := range s.deliveries {
		h.Done = append(h.Done, checker.Done{MsgID: d.MsgID, Client: d.Client, Group: d.Group})
	}
	return nil
}

// sqsHistory is what the world's SQS clients did, as the nodes saw it.
type sqsHistory struct {
	mu         sync.Mutex
	sends      []checker.Send
	index      map[string]int // message id → its send
	deliveries []checker.Delivery
	clients    map[string]bool
	asked      int // requests of every kind
}

var sqsFates = map[sqswire.Fate]checker.Outcome{
	sqswire.Acked: checker.Acknowledged, sqswire.Refused: checker.Failed, sqswire.Unknown: checker.Unknown,
}

func (h *sqsHistory) Asked(a sqswire.Asked) {
	if a.Client == sqsProbe {
		return // the lab's own check, not a client of the learner's
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen(a.Client)
	h.asked++
}

func (h *sqsHistory) Sent(s sqswire.Sent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen(s.Client)
	if h.index == nil {
		h.index = map[string]int{}
	}
	outcome := sqsFates[s.Fate]
	i, ok := h.index[s.MsgID]
	if !ok {
		h.index[s.MsgID] = len(h.sends)
		h.sends = append(h.sends, checker.Send{MsgID: s.MsgID, Client: s.Client, Queue: s.Queue, Outcome: outcome})
		return
	}
	if cur := &h.sends[i]; outcome.Outranks(cur.Outcome) {
		cur.Outcome = outcome // a retry that was answered outranks the attempt whose answer was lost
	}
}

func (h *sqsHistory) Received(r sqswire.Received) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen(r.Client)
	h.deliveries = append(h.deliveries, checker.Delivery{MsgID: r.MsgID, Client: r.Client, Group: r.Queue})
}

func (h *sqsHistory) seen(client string) {
	if h.clients == nil {
		h.clients = map[string]bool{}
	}
	h.clients[client] = true
}

// clientNames are the SQS clients that have made a request, sorted.
func (h *sqsHistory) clientNames() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Sorted(maps.Keys(h.clients))
}

// OutsideActions counts what clients outside the lab did through its
// listeners: each request an SQS client made (a receive that found
// nothing too: the learner acted, and what they wait for may need lab
// time to pass), each record a Kafka client produced or was handed. A lesson's player counts a rise as
// the learner acting, for a task done with their own client in another
// terminal.
func (l *Lab) OutsideActions() int {
	w, err := l.world()
	if err != nil {
		return 0
	}
	h := &w.sqsWire
	h.mu.Lock()
	n := h.asked
	h.mu.Unlock()
	return n + w.kafka.Actions()
}

// deliveredFrom counts the messages SQS clients received from queue,
// repeats included.
func (h *sqsHistory) deliveredFrom(queue string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, d := range h.deliveries {
		if d.Group == queue {
			n++
		}
	}
	return n
}

// sqsProbe is the client name sqs_reaches asks under. Lab clients cannot
// take a name that starts with '_', so it is never a learner's client,
// and the SQS clients the screen lists leave it out.
const sqsProbe = "_lab-check"

// sqsProbeHandle is a receipt handle of the right form that no message
// has: the leader answers it ReceiptHandleIsInvalid and changes nothing.
const sqsProbeHandle = "m999999999-r1"

// sqsReaches reads sqs_reaches(NODE, QUEUE): it sends NODE's SQS port a
// ChangeMessageVisibility for QUEUE, as a client would, and says what came
// back. Any answer from the queue's leader, here an invalid receipt, is
// yes; ServiceUnavailable is unavailable; a refused connection, refused.
func sqsReaches(ctx context.Context, w *world, v command.Value) (any, bool, error) {
	nodes := w.cluster.Nodes()
	if !slices.Contains(nodes, v.Arg) {
		return nil, true, fmt.Errorf("%s: no node named %q; the nodes are %s%s", v, v.Arg, strings.Join(nodes, ", "), didYouMean(v.Arg, nodes))
	}
	if !w.isQueue(v.Key) {
		return nil, true, fmt.Errorf("%s: no queue named %q", v, v.Key)
	}
	srv := w.sqsServer()
	if srv == nil {
		return nil, true, fmt.Errorf("%s: the nodes are not listening for SQS clients; start them with sqs listen", v)
	}
	endpoint := srv.Endpoint(v.Arg)
	body, _ := json.Marshal(map[string]any{
		"QueueUrl": endpoint + "/000000000000/" + v.Key, "ReceiptHandle": sqsProbeHandle, "VisibilityTimeout": 0,
	})
	ctx, cancel := context.WithTimeout(ctx, sqsProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", v, err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS.ChangeMessageVisibility")
	req.Header.Set("X-Mqlab-Client", sqsProbe)
	resp, err := sqsProbeClient.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return "refused", true, nil
		}
		// No answer in time, or the connection closed without one: not
		// yet readable, as a wait keeps polling through.
		return nil, true, notNow(fmt.Errorf("%s: %s gave no answer: %w", v, v.Arg, err))
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable {
		return "unavailable", true, nil
	}
	return "yes", true, nil
}

// sqsProbeTimeout bounds sqs_reaches' request: a node forwards at once or
// answers ServiceUnavailable once its wait for a leader runs out.
const sqsProbeTimeout = 15 * time.Second

var sqsProbeClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
