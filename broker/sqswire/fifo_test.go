package sqswire

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// A FIFO queue: a send whose reply is lost is retried by the SDK with the
// same deduplication id and stored once; a later send repeating the id is
// answered with the original message id; a group is handed out in order
// and held while one of its messages is in flight.
func TestSDKFIFO(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	l := newLab(t, 3)
	ctx := ctxFor(t, 60*time.Second)
	cl := l.client("n1", "fifo-shop")
	url := createQueue(ctx, t, cl, "orders.fifo", map[string]string{"FifoQueue": "true", "VisibilityTimeout": "30"})
	if err := l.c.DropNextReply("fifo-shop"); err != nil {
		t.Fatal(err)
	}
	first, err := cl.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("order 881 placed"),
		MessageGroupId: aws.String("user-7"), MessageDeduplicationId: aws.String("order-881")})
	if err != nil {
		t.Fatalf("send across a lost reply: %v", err)
	}
	if armed := l.c.Armed("fifo-shop"); len(armed) != 0 {
		t.Fatalf("the lost reply never fired: %v still armed", armed)
	}
	again, err := cl.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("order 881 placed"),
		MessageGroupId: aws.String("user-7"), MessageDeduplicationId: aws.String("order-881")})
	if err != nil {
		t.Fatal(err)
	}
	if *again.MessageId != *first.MessageId {
		t.Errorf("a repeat's answer names %s; want the original %s", *again.MessageId, *first.MessageId)
	}
	for _, body := range []string{"order 881 paid", "order 881 shipped"} {
		if _, err := cl.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String(body),
			MessageGroupId: aws.String("user-7"), MessageDeduplicationId: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cl.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("order 990 placed"),
		MessageGroupId: aws.String("user-9"), MessageDeduplicationId: aws.String("order-990")}); err != nil {
		t.Fatal(err)
	}
	_, err = cl.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("no group"), MessageDeduplicationId: aws.String("x")})
	if err == nil {
		t.Error("a FIFO send without a group was accepted")
	}
	if q, _ := l.s.queueState("orders.fifo"); q.Counts.Sent != 4 {
		t.Fatalf("the queue took %d sends; want 4 (the repeat dropped)", q.Counts.Sent)
	}
	recv := func(max int32) []types.Message {
		t.Helper()
		out, err := cl.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: max,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameMessageGroupId}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Messages
	}
	a := recv(1)
	if len(a) != 1 || *a[0].Body != "order 881 placed" || a[0].Attributes["MessageGroupId"] != "user-7" {
		t.Fatalf("first receive: %v; want order 881 placed of user-7", a)
	}
	b := recv(10)
	if len(b) != 1 || *b[0].Body != "order 990 placed" {
		t.Fatalf("while user-7's first is in flight: %d messages; want user-9's only", len(b))
	}
	for _, m := range append(a, b...) {
		if _, err := cl.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
	}
	c := recv(10)
	if len(c) != 2 || *c[0].Body != "order 881 paid" || *c[1].Body != "order 881 shipped" {
		t.Fatalf("after the delete: %v; want paid then shipped", c)
	}
}
