package bench

// The SQS phase: workers sending, receiving and deleting through the SQS
// listener of a 3-node lab, and the same workers against a minimal echo
// of the protocol, which prices the HTTP and client part. mqlab bench
// speaks SQS's JSON protocol with a small client of its own (sqsHTTP);
// the Go benchmark runs the same workers on aws-sdk-go-v2 as well.

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/sqswire"
)

// The SQS phase's shape and its target.
const (
	// SQSWorkers each send a batch, receive, and delete what came, in turn.
	SQSWorkers = 8
	// SQSBatch is the messages a send, a receive and a delete carry.
	SQSBatch = 10
	// TargetSQS is the rate, in messages a second through the whole
	// cycle, the lab's SQS listener should reach on two cores.
	TargetSQS = 5000
)

// SQSRate is one SQS run: messages through the whole cycle, and the
// median time of a SendMessageBatch call.
type SQSRate struct {
	Rate    Rate
	SendP50 time.Duration
}

// SQSResult is the SQS phase: the lab, and the echo beside it.
type SQSResult struct {
	Lab, Echo SQSRate
}

// SQSClient is what a bench worker asks of one SQS endpoint.
type SQSClient interface {
	CreateQueue(ctx context.Context, name string, attributes map[string]string) error
	SendBatch(ctx context.Context, url string, bodies []string) error
	// Receive long-polls for up to max messages and returns their
	// receipt handles.
	Receive(ctx context.Context, url string, max int, wait time.Duration) ([]string, error)
	DeleteBatch(ctx context.Context, url string, handles []string) error
}

// SQS runs messages through the lab's SQS listener and then through the
// echo, with the same workers on the bench's own client.
func SQS(ctx context.Context, messages int) (SQSResult, error) {
	var res SQSResult
	var err error
	if res.Lab, err = SQSLab(ctx, messages, NewSQSHTTP); err != nil {
		return res, fmt.Errorf("lab: %w", err)
	}
	if res.Echo, err = SQSEcho(ctx, messages, NewSQSHTTP); err != nil {
		return res, fmt.Errorf("echo: %w", err)
	}
	return res, nil
}

// SQSLab times messages sent, received and deleted by SQSWorkers
// clients (made by client, one per worker) through a 3-node lab's SQS listener (RF 3), each
// worker on its own node's endpoint in turn, so two of three requests
// are forwarded to the queue's leader. Every send, receive and delete is
// a raft entry of the queue's group.
func SQSLab(ctx context.Context, messages int, client func(endpoint string) SQSClient) (SQSRate, error) {
	c, err := broker.NewCluster(broker.Config{Nodes: Nodes})
	if err != nil {
		return SQSRate{}, fmt.Errorf("start cluster: %w", err)
	}
	defer c.Close()
	srv, err := sqswire.Listen(c, sqswire.Config{Port: -1})
	if err != nil {
		return SQSRate{}, err
	}
	defer srv.Close()
	wctx, cancel := context.WithTimeout(ctx, benchWait)
	defer cancel()
	nodes := c.Nodes()
	first := client(srv.Endpoint(nodes[0]))
	if err := first.CreateQueue(wctx, "bench", map[string]string{"VisibilityTimeout": "60"}); err != nil {
		return SQSRate{}, err
	}
	var workers []sqsWorker
	for w := range SQSWorkers {
		node := nodes[w%len(nodes)]
		workers = append(workers, sqsWorker{cl: client(srv.Endpoint(node)), url: srv.QueueURL(node, "bench")})
	}
	r, err := sqsCycle(wctx, workers, messages)
	if err != nil {
		return r, err
	}
	for _, q := range c.SnapshotWindow(0).Queues {
		if k := q.Counts; q.Config.Name == "bench" && (k.Acked != uint64(messages) || k.Held() != 0) {
			return r, fmt.Errorf("after %d messages the queue counts %+v; want every one deleted, none held", messages, k)
		}
	}
	return r, nil
}

// SQSEcho times the same cycle against echo, an in-process HTTP server
// that answers each action as SQS would without keeping anything: every
// receive hands out a full batch.
func SQSEcho(ctx context.Context, messages int, client func(endpoint string) SQSClient) (SQSRate, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return SQSRate{}, err
	}
	hs := &http.Server{Handler: echo{}, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	wctx, cancel := context.WithTimeout(ctx, benchWait)
	defer cancel()
	endpoint := "http://" + ln.Addr().String()
	var workers []sqsWorker
	for range SQSWorkers {
		workers = append(workers, sqsWorker{cl: client(endpoint), url: endpoint + "/" + sqswire.Account + "/bench"})
	}
	return sqsCycle(wctx, workers, messages)
}

type sqsWorker struct {
	cl  SQSClient
	url string
}

// sqsRun is what the workers of one run share.
type sqsRun struct {
	total            int64
	claimed, deleted atomic.Int64
	done             chan struct{} // closed when the last message is deleted
	doneAt           time.Time
	doneOnce         sync.Once
	ferr             firstErr

	latMu     sync.Mutex
	latencies []time.Duration // one a SendBatch call
}

// sqsCycle runs the workers until messages have been sent, received and
// deleted, and times it from the first send to the last delete.
func sqsCycle(ctx context.Context, workers []sqsWorker, messages int) (SQSRate, error) {
	run := &sqsRun{total: int64(messages), done: make(chan struct{})}
	body := string(benchValues(0)[0])
	// Once every message is deleted, the receives still waiting in a long
	// poll are called off; a send or delete under way finishes.
	polls, cancel := context.WithCancel(ctx)
	defer cancel()
	runtime.GC()
	cpu0 := processCPU()
	start := time.Now()
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.work(ctx, polls, w, body)
		}()
	}
	go func() {
		select {
		case <-run.done:
		case <-polls.Done():
		}
		cancel()
	}()
	wg.Wait()
	if err := run.ferr.get(); err != nil {
		return SQSRate{}, err
	}
	select {
	case <-run.done:
	default:
		return SQSRate{}, fmt.Errorf("%d of %d messages deleted: %w", run.deleted.Load(), messages, ctx.Err())
	}
	elapsed, cpu := run.doneAt.Sub(start), processCPU()-cpu0
	if len(run.latencies) == 0 {
		return SQSRate{}, fmt.Errorf("no send was timed")
	}
	slices.Sort(run.latencies)
	return SQSRate{Rate: Rate{Messages: messages, Batches: messages / SQSBatch, Elapsed: elapsed, CPU: cpu},
		SendP50: run.latencies[len(run.latencies)/2]}, nil
}

// work sends a batch while some are left to send, receives, and deletes
// what it received, until every message is deleted.
func (r *sqsRun) work(ctx, polls context.Context, w sqsWorker, body string) {
	bodies := make([]string, SQSBatch)
	for i := range bodies {
		bodies[i] = body
	}
	fail := func(what string, err error) {
		if r.deleted.Load() < r.total {
			r.ferr.set(fmt.Errorf("%s: %w", what, err))
		}
	}
	for r.deleted.Load() < r.total && r.ferr.get() == nil {
		if from := r.claimed.Add(SQSBatch) - SQSBatch; from < r.total {
			n := min(SQSBatch, r.total-from)
			t0 := time.Now()
			if err := w.cl.SendBatch(ctx, w.url, bodies[:n]); err != nil {
				fail("send", err)
				return
			}
			lat := time.Since(t0)
			r.latMu.Lock()
			r.latencies = append(r.latencies, lat)
			r.latMu.Unlock()
		}
		handles, err := w.cl.Receive(polls, w.url, SQSBatch, time.Second)
		if err != nil {
			fail("receive", err)
			return
		}
		if len(handles) == 0 {
			continue
		}
		if err := w.cl.DeleteBatch(ctx, w.url, handles); err != nil {
			fail("delete", err)
			return
		}
		if r.deleted.Add(int64(len(handles))) >= r.total {
			r.doneOnce.Do(func() {
				r.doneAt = time.Now()
				close(r.done)
			})
		}
	}
}

// echo answers SendMessageBatch, ReceiveMessage and DeleteMessageBatch in
// the JSON protocol, as SQS would, holding nothing: a receive always
// hands out a full batch of the same message.
type echo struct{}

// echoBody is the message every echo receive hands out.
var echoBody = string(benchValues(0)[0])

var echoReceive = func() []byte {
	sum := md5.Sum([]byte(echoBody))
	type msg struct{ MessageId, ReceiptHandle, MD5OfBody, Body string }
	var msgs []msg
	for i := range SQSBatch {
		msgs = append(msgs, msg{"e" + strconv.Itoa(i), "r" + strconv.Itoa(i), hex.EncodeToString(sum[:]), echoBody})
	}
	b, _ := json.Marshal(map[string]any{"Messages": msgs})
	return b
}()

func (echo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Entries []struct{ Id, MessageBody string }
	}
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(body, &in)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	switch r.Header.Get("X-Amz-Target") {
	case "AmazonSQS.SendMessageBatch":
		type ok struct{ Id, MessageId, MD5OfMessageBody string }
		out := make([]ok, len(in.Entries))
		for i, e := range in.Entries {
			sum := md5.Sum([]byte(e.MessageBody))
			out[i] = ok{e.Id, "e" + e.Id, hex.EncodeToString(sum[:])}
		}
		json.NewEncoder(w).Encode(map[string]any{"Successful": out, "Failed": []any{}})
	case "AmazonSQS.ReceiveMessage":
		w.Write(echoReceive)
	case "AmazonSQS.DeleteMessageBatch":
		type ok struct{ Id string }
		out := make([]ok, len(in.Entries))
		for i, e := range in.Entries {
			out[i] = ok{e.Id}
		}
		json.NewEncoder(w).Encode(map[string]any{"Successful": out, "Failed": []any{}})
	default:
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"__type":"com.amazonaws.sqs#InvalidAction","message":"the echo answers sends, receives and deletes only"}`))
	}
}
