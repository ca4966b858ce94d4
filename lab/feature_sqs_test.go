package lab

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

func sqsClient(t *testing.T, l *Lab, app string) *sqs.Client {
	t.Helper()
	st := l.Snapshot().SQS
	if st == nil {
		t.Fatal("the lab is not listening for SQS clients")
	}
	return sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(st.Endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("mqlab", "mqlab", ""),
		AppID:        app,
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 40
			o.MaxBackoff = 100 * time.Millisecond
			o.RateLimiter = ratelimit.None
		}),
	})
}

// The checker sees SQS clients as it sees the lab's workers: a send whose
// reply is lost is retried by the SDK and stored twice, a duplicate the
// checker counts; the queue's leader dies while a worker drains it, and
// every confirmed message is accounted for.
func TestCheckerSeesSQSClients(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l, "queue create receipts visibility=2s", "elect n2 receipts", "sqs listen port=0")
	if st := l.Snapshot().SQS; st == nil || !strings.HasPrefix(st.Endpoint, "http://127.0.0.1:") {
		t.Fatalf("the snapshot's SQS listener is %+v; want n1's endpoint on 127.0.0.1", st)
	}
	ctx := ctxFor(t, 60*time.Second)
	shop := sqsClient(t, l, "shop")
	url, err := shop.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("receipts")})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := range n {
		if i == 5 {
			mustRun(t, l, "drop next reply to shop")
		}
		if _, err := shop.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url.QueueUrl, MessageBody: aws.String(fmt.Sprint("receipt ", 881+i))}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if !firedFor(l, "shop") {
		t.Fatal("the lost reply to shop never fired")
	}
	worker := sqsClient(t, l, "billing")
	got := 0
	for got < n+1 {
		if got == n/2 {
			mustRun(t, l, "kill leader(receipts)")
		}
		out, err := worker.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		for _, m := range out.Messages {
			got++
			if _, err := worker.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: url.QueueUrl, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatalf("delete: %v", err)
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("received %d of %d", got, n+1)
		}
	}
	rep, err := l.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Confirmed != n || rep.Lost != 0 || rep.Unknown != 0 || rep.DuplicateDeliveries != 1 {
		t.Fatalf("report %s; want %d confirmed, none lost and the one duplicate", rep.Summary(), n)
	}
	// delivered(Q) counts an SQS client's receives as a worker's, and
	// the lab counts each request as the outside client acting: every
	// send, receive and delete at least, and a receive that finds nothing.
	mustRun(t, l, fmt.Sprintf("expect delivered(receipts) == %d", n+1))
	before := l.OutsideActions()
	if before < n+2*(n+1) {
		t.Errorf("the lab counts %d outside actions; want at least %d sends, %d receives and %d deletes", before, n, n+1, n+1)
	}
	out, err := worker.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl})
	if err != nil || len(out.Messages) != 0 {
		t.Fatalf("a receive from the drained queue: %v, %d messages", err, len(out.Messages))
	}
	if got := l.OutsideActions(); got != before+1 {
		t.Errorf("after a receive that found nothing the lab counts %d outside actions; want %d", got, before+1)
	}
}

// The lab's own send reaches a FIFO queue's groups and deduplication: a
// repeated dedupe-id is dropped, and the checker finds nothing lost.
func TestLabSendToFIFOQueue(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l, "queue create jobs.fifo fifo=true",
		`send jobs.fifo value="order 881 placed" group=user-7 dedupe-id=order-881`,
		`send jobs.fifo value="order 881 placed" group=user-7 dedupe-id=order-881`,
		`send jobs.fifo value="step {n}" group=user-9 dedupe-id=step-{n} count=3`,
		"expect depth(jobs.fifo) == 4")
	ctx := ctxFor(t, 30*time.Second)
	rep, err := l.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lost != 0 || rep.Unknown != 0 {
		t.Fatalf("report %s; want nothing lost", rep.Summary())
	}
}

// PurgeQueue drops every message held, one in flight too; the checker
// counts them as dropped, not lost.
func TestSQSPurge(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l, "queue create receipts", "sqs listen port=0")
	ctx := ctxFor(t, 30*time.Second)
	cl := sqsClient(t, l, "admin")
	url, err := cl.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("receipts")})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := cl.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url.QueueUrl, MessageBody: aws.String(fmt.Sprint("receipt ", i))}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := cl.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl}); err != nil || len(got.Messages) != 1 {
		t.Fatalf("receive: %v %v", got, err)
	}
	if _, err := cl.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: url.QueueUrl}); err != nil {
		t.Fatal(err)
	}
	mustRun(t, l, "expect depth(receipts) == 0")
	rep, err := l.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Confirmed != 3 || rep.Lost != 0 || rep.Dropped != 3 {
		t.Fatalf("report %s; want 3 confirmed, all dropped, none lost", rep.Summary())
	}
}

// sqs_answers(NODE) dials the node's SQS port as a client would: a killed
// node's port refuses, a live one's takes the connection, and a restart
// opens it again. A node that is no node, or a lab not listening, is an
// error that says what would be right.
func TestSQSAnswersDialsTheNodesPort(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	ctx := ctxFor(t, 10*time.Second)
	if _, err := l.Exec(ctx, "expect sqs_answers(n1) == yes"); err == nil || !strings.Contains(err.Error(), "start them with sqs listen") {
		t.Errorf("before sqs listen: %v", err)
	}
	mustRun(t, l, "sqs listen port=0",
		"expect sqs_answers(n1) == yes",
		"kill n1",
		// The listener closes a moment after the node is down.
		"wait sqs_answers(n1) == no timeout=10s",
		"expect sqs_answers(n2) == yes",
		"restart n1",
		"wait sqs_answers(n1) == yes timeout=10s")
	if _, err := l.Exec(ctx, "expect sqs_answers(n9) == no"); err == nil || !strings.Contains(err.Error(), `no node named "n9"; the nodes are n1, n2, n3`) {
		t.Errorf("an unknown node: %v", err)
	}
}

// renewals(Q) counts an SQS client's ChangeMessageVisibility as it counts
// a lab worker's extend=: each new deadline the queue accepted, once.
func TestRenewalsCountSQSClients(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l, "queue create receipts visibility=2s", "sqs listen port=0", `send receipts value="receipt 881"`)
	ctx := ctxFor(t, 30*time.Second)
	c := sqsClient(t, l, "billing")
	url, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("receipts")})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl, WaitTimeSeconds: 1})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("receive: %v, %d messages", err, len(out.Messages))
	}
	for range 3 {
		if _, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: url.QueueUrl,
			ReceiptHandle: out.Messages[0].ReceiptHandle, VisibilityTimeout: 5}); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, l, "expect renewals(receipts) == 3")
}

// sqs_reaches(NODE, QUEUE) asks through the node's SQS port as a client
// would: a live node with a leader behind it passes the request on; a
// live node whose queue has no leader answers ServiceUnavailable; a dead
// node's port refuses. The request changes nothing in the queue, and its
// client is not listed among the learner's.
func TestSQSReachesAsksThroughTheNode(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l, "queue create receipts visibility=10s", "elect n3 receipts", "sqs listen port=0",
		`send receipts value="receipt 882"`,
		"expect sqs_reaches(n1, receipts) == yes",
		"expect sqs_reaches(n3, receipts) == yes",
		"expect depth(receipts) == 1", "expect inflight(receipts) == 0",
		"kill n1",
		"wait sqs_answers(n1) == no timeout=10s",
		"expect sqs_reaches(n1, receipts) == refused",
		"expect sqs_reaches(n2, receipts) == yes",
		"kill n3",
		"wait leader(receipts) == none timeout=10s",
		"expect sqs_reaches(n2, receipts) == unavailable",
		"restart n3",
		"wait leader(receipts) != none timeout=20s",
		"wait sqs_reaches(n2, receipts) == yes timeout=20s",
		"expect depth(receipts) == 1", "expect delivered(receipts) == 0")
	w, err := l.world()
	if err != nil {
		t.Fatal(err)
	}
	if got := w.sqsWire.clientNames(); len(got) != 0 {
		t.Errorf("the SQS clients listed are %v; the lab's own check is none of them", got)
	}
	ctx := ctxFor(t, 10*time.Second)
	if _, err := l.Exec(ctx, "expect sqs_reaches(n2, nope) == yes"); err == nil || !strings.Contains(err.Error(), `no queue named "nope"`) {
		t.Errorf("an unknown queue: %v", err)
	}
	if _, err := l.Exec(ctx, "expect sqs_reaches(receipts) == yes"); err == nil {
		t.Errorf("sqs_reaches with one argument was accepted")
	}
}
