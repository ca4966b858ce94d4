package sqswire

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/mqlab/mqlab/broker"
)

// lab is a fast-timing cluster with SQS on every node.
type lab struct {
	c   *broker.Cluster
	s   *Server
	obs *recorder
}

// recorder keeps what the observer heard.
type recorder struct {
	mu       sync.Mutex
	asked    []Asked
	sent     []Sent
	received []Received
}

func (r *recorder) Asked(a Asked) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, a)
}

func (r *recorder) Sent(s Sent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, s)
}

func (r *recorder) Received(x Received) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.received = append(r.received, x)
}

func newLab(t *testing.T, nodes int) *lab {
	t.Helper()
	c, err := broker.NewCluster(broker.Config{Nodes: nodes})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	obs := &recorder{}
	s, err := Listen(c, Config{Port: -1, Observer: obs})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return &lab{c: c, s: s, obs: obs}
}

// client is an SDK client of node's endpoint that names itself app.
func (l *lab) client(node, app string) *sqs.Client {
	return sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(l.s.Endpoint(node)),
		Credentials:  credentials.NewStaticCredentialsProvider("mqlab", "mqlab", ""),
		AppID:        app,
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 40
			o.MaxBackoff = 100 * time.Millisecond
			o.RateLimiter = ratelimit.None
		}),
	})
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func createQueue(ctx context.Context, t *testing.T, cl *sqs.Client, name string, attrs map[string]string) string {
	t.Helper()
	out, err := cl.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatalf("create queue %s: %v", name, err)
	}
	return *out.QueueUrl
}

// Every request is heard, a receive that found nothing too: a learner's
// client that asks has acted, even when what it waits for needs lab time.
func TestEveryRequestIsAsked(t *testing.T) {
	t.Parallel()
	l := newLab(t, 3)
	ctx := ctxFor(t, 60*time.Second)
	cl := l.client("n1", "me")
	url := createQueue(ctx, t, cl, "receipts", nil)
	out, err := cl.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url})
	if err != nil || len(out.Messages) != 0 {
		t.Fatalf("receive from an empty queue: %v, %d messages", err, len(out.Messages))
	}
	l.obs.mu.Lock()
	defer l.obs.mu.Unlock()
	var actions []string
	for _, a := range l.obs.asked {
		if a.Client != "me" {
			t.Errorf("a request of %q; want the client's own name, me", a.Client)
		}
		actions = append(actions, a.Action)
	}
	if !slices.Contains(actions, "CreateQueue") || !slices.Contains(actions, "ReceiveMessage") {
		t.Errorf("heard %v; want the CreateQueue and the empty ReceiveMessage", actions)
	}
	if len(l.obs.received) != 0 {
		t.Errorf("an empty receive handed out %d messages", len(l.obs.received))
	}
}

// A message sent with attributes comes back with them, its MD5s check
// (the SDK compares them), a receive count and a sent time; a delete
// removes it, and the queue's attributes count what it holds.
func TestSDKSendReceiveDelete(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	l := newLab(t, 3)
	ctx := ctxFor(t, 60*time.Second)
	cl := l.client("n2", "shop")
	url := createQueue(ctx, t, cl, "receipts", map[string]string{"VisibilityTimeout": "10"})
	if _, err := cl.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("receipts")}); err != nil {
		t.Fatalf("get queue url: %v", err)
	}
	if again := createQueue(ctx, t, cl, "receipts", map[string]string{"VisibilityTimeout": "10"}); again != url {
		t.Fatalf("creating it again gave %s; want %s", again, url)
	}
	_, err := cl.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("receipts"), Attributes: map[string]string{"VisibilityTimeout": "11"}})
	var exists *types.QueueNameExists
	if !errors.As(err, &exists) {
		t.Fatalf("creating it with another visibility: %v; want QueueNameExists", err)
	}
	sent, err := cl.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("receipt 881 ₹450"),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"order":  {DataType: aws.String("Number"), StringValue: aws.String("881")},
			"region": {DataType: aws.String("String"), StringValue: aws.String("south")},
			"blob":   {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2}},
		}})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	batch, err := cl.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("receipt 882")},
		{Id: aws.String("b"), MessageBody: aws.String("receipt 883"), DelaySeconds: 600},
		{Id: aws.String("c"), MessageBody: aws.String("")},
	}})
	if err != nil {
		t.Fatalf("send batch: %v", err)
	}
	if len(batch.Successful) != 2 || len(batch.Failed) != 1 || *batch.Failed[0].Id != "c" {
		t.Fatalf("batch: %d sent, %d failed; want 2 and 1 (the empty body)", len(batch.Successful), len(batch.Failed))
	}
	got, err := cl.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"}})
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	if len(got.Messages) == 0 {
		t.Fatal("receive: no message")
	}
	first := got.Messages[0]
	if *first.MessageId != *sent.MessageId || *first.Body != "receipt 881 ₹450" {
		t.Fatalf("first message: id %s body %q; want %s and the body sent", *first.MessageId, *first.Body, *sent.MessageId)
	}
	if first.Attributes["ApproximateReceiveCount"] != "1" || first.Attributes["SentTimestamp"] == "" || first.Attributes["SenderId"] != "shop" {
		t.Errorf("system attributes %v; want receive count 1, a sent time and sender shop", first.Attributes)
	}
	if a := first.MessageAttributes["order"]; a.StringValue == nil || *a.StringValue != "881" || string(first.MessageAttributes["blob"].BinaryValue) != "\x00\x01\x02" {
		t.Errorf("message attributes %v", first.MessageAttributes)
	}
	attrs, err := cl.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		t.Fatalf("get attributes: %v", err)
	}
	a := attrs.Attributes
	if a["ApproximateNumberOfMessagesNotVisible"] != strconv.Itoa(len(got.Messages)) || a["ApproximateNumberOfMessagesDelayed"] != "1" || a["VisibilityTimeout"] != "10" || a["QueueArn"] == "" {
		t.Errorf("attributes %v; want %d in flight, 1 delayed, visibility 10", a, len(got.Messages))
	}
	for _, m := range got.Messages {
		if _, err := cl.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
	_, err = cl.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(l.s.QueueURL("n2", "nowhere")), MessageBody: aws.String("x")})
	var missing *types.QueueDoesNotExist
	if !errors.As(err, &missing) {
		t.Errorf("send to a missing queue: %v; want QueueDoesNotExist", err)
	}
	_, err = cl.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: aws.String("forged")})
	var invalid *types.ReceiptHandleIsInvalid
	if !errors.As(err, &invalid) {
		t.Errorf("delete with a forged handle: %v; want ReceiptHandleIsInvalid", err)
	}

	// Deleting the queue, through another node, drops the delayed message
	// it still holds; its URL then names no queue.
	other := l.client("n3", "admin")
	if _, err := other.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &url}); err != nil {
		t.Fatalf("delete queue: %v", err)
	}
	_, err = cl.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("receipt 884")})
	if !errors.As(err, &missing) {
		t.Errorf("send to the deleted queue: %v; want QueueDoesNotExist", err)
	}
	if _, err := cl.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("receipts")}); !errors.As(err, &missing) {
		t.Errorf("get the deleted queue's url: %v; want QueueDoesNotExist", err)
	}
	if _, err := other.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &url}); !errors.As(err, &missing) {
		t.Errorf("delete it again: %v; want QueueDoesNotExist", err)
	}
	if list, err := cl.ListQueues(ctx, &sqs.ListQueuesInput{}); err != nil || len(list.QueueUrls) != 0 {
		t.Errorf("list queues after the delete: %v %v; want none", list.QueueUrls, err)
	}
	if again := createQueue(ctx, t, cl, "receipts", nil); again != url {
		t.Fatalf("creating receipts again gave %s; want %s", again, url)
	}
	attrs, err = cl.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil || attrs.Attributes["ApproximateNumberOfMessagesDelayed"] != "0" || attrs.Attributes["VisibilityTimeout"] != "30" {
		t.Errorf("the new receipts: %v %v; want it empty, with SQS's default visibility", attrs.Attributes, err)
	}
}

// A worker that works past its visibility timeout sees the message again,
// with ApproximateReceiveCount 2; its old receipt handle can no longer
// change the visibility, and a delete with it does nothing.
func TestSDKVisibilityTimeout(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	l := newLab(t, 3)
	ctx := ctxFor(t, 60*time.Second)
	cl := l.client("n1", "slow-worker")
	url := createQueue(ctx, t, cl, "jobs", map[string]string{"VisibilityTimeout": "1"})
	if _, err := cl.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("job 7")}); err != nil {
		t.Fatalf("send: %v", err)
	}
	receive := func() types.Message {
		t.Helper()
		for {
			got, err := cl.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 5,
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount}})
			if err != nil {
				t.Fatalf("receive: %v", err)
			}
			if len(got.Messages) > 0 {
				return got.Messages[0]
			}
			if ctx.Err() != nil {
				t.Fatal("no message came back")
			}
		}
	}
	m1 := receive()
	m2 := receive() // long-polls until the first visibility timeout runs out
	if m2.Attributes["ApproximateReceiveCount"] != "2" || *m2.MessageId != *m1.MessageId {
		t.Fatalf("second receive: %s count %s; want %s again with count 2", *m2.MessageId, m2.Attributes["ApproximateReceiveCount"], *m1.MessageId)
	}
	_, err := cl.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: m1.ReceiptHandle, VisibilityTimeout: 30})
	var notInflight *types.MessageNotInflight
	if !errors.As(err, &notInflight) {
		t.Errorf("change visibility with the first handle: %v; want MessageNotInflight", err)
	}
	if _, err := cl.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m1.ReceiptHandle}); err != nil {
		t.Fatalf("delete with the old handle: %v; SQS answers it with success", err)
	}
	q, _ := l.s.queueState("jobs")
	if q.Counts.InFlight != 1 || q.Counts.Acked != 0 {
		t.Fatalf("after a delete with an old handle: %d in flight, %d acked; want the message still in flight", q.Counts.InFlight, q.Counts.Acked)
	}
	if _, err := cl.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m2.ReceiptHandle}); err != nil {
		t.Fatalf("delete: %v", err)
	}
}

// 1,000 messages, three workers on a node that does not lead the queue,
// and the queue's leader killed while they work: every message is
// processed at least once, none is lost, and the queue accounts for them
// all as deleted.
func TestSDKWorkersAcrossLeaderKill(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	l := newLab(t, 3)
	ctx := ctxFor(t, 120*time.Second)
	admin := l.client("n1", "admin")
	url := createQueue(ctx, t, admin, "orders", map[string]string{"VisibilityTimeout": "5"})
	leader, err := l.c.WaitForQueueLeader(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	entry := "n1"
	for _, n := range l.c.Nodes() {
		if n != leader {
			entry = n
			break
		}
	}
	url = l.s.QueueURL(entry, "orders")
	sender := l.client(entry, "shop")
	const n = 1000
	for i := 0; i < n; i += 10 {
		var entries []types.SendMessageBatchRequestEntry
		for j := i; j < i+10; j++ {
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint("e", j)), MessageBody: aws.String(fmt.Sprint("order ", j))})
		}
		out, err := sender.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: entries})
		if err != nil || len(out.Failed) > 0 {
			t.Fatalf("send batch at %d: %v %v", i, err, out)
		}
	}
	var mu sync.Mutex
	done := map[string]int{}
	var wg sync.WaitGroup
	killed := make(chan struct{})
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := l.client(entry, fmt.Sprint("worker-", w+1))
			for {
				mu.Lock()
				finished := len(done) == n
				mu.Unlock()
				if finished || ctx.Err() != nil {
					return
				}
				got, err := cl.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
				if err != nil {
					t.Errorf("worker %d receive: %v", w+1, err)
					return
				}
				for _, m := range got.Messages {
					mu.Lock()
					done[*m.Body]++
					mu.Unlock()
					if _, err := cl.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
						t.Errorf("worker %d delete: %v", w+1, err)
						return
					}
				}
			}
		}()
	}
	go func() {
		defer close(killed)
		for ctx.Err() == nil {
			mu.Lock()
			k := len(done)
			mu.Unlock()
			if k >= n/3 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if err := l.c.Kill(leader); err != nil {
			t.Errorf("kill %s: %v", leader, err)
		}
	}()
	wg.Wait()
	<-killed
	if len(done) != n {
		t.Fatalf("%d of %d messages processed", len(done), n)
	}
	if _, err := l.c.WaitForQueueLeader(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	q, _ := l.s.queueState("orders")
	if q.Counts.Depth() != 0 {
		t.Errorf("the queue still holds %d messages after every one was deleted", q.Counts.Depth())
	}
	dups := 0
	for _, k := range done {
		dups += k - 1
	}
	t.Logf("killed %s (the leader) at a third; %d messages processed twice", leader, dups)
}
