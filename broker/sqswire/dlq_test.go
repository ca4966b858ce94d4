package sqswire

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// A message received maxReceiveCount times without a delete goes to the
// dead-letter queue, which names its source; a move task redrives it.
func TestSDKDeadLetterAndRedrive(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	l := newLab(t, 3)
	ctx := ctxFor(t, 60*time.Second)
	cl := l.client("n1", "billing")
	dlq := createQueue(ctx, t, cl, "receipts-dlq", nil)
	url := createQueue(ctx, t, cl, "receipts", map[string]string{"VisibilityTimeout": "1",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:receipts-dlq","maxReceiveCount":"2"}`})
	if _, err := cl.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("receipt 881")}); err != nil {
		t.Fatal(err)
	}
	sources, err := cl.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &dlq})
	if err != nil || len(sources.QueueUrls) != 1 || sources.QueueUrls[0] != url {
		t.Fatalf("dead-letter sources: %v %v; want %s", sources, err, url)
	}
	receive := func(q string) []types.Message {
		t.Helper()
		out, err := cl.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &q, WaitTimeSeconds: 2,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Messages
	}
	for i := 1; i <= 2; {
		if got := receive(url); len(got) == 1 {
			if got[0].Attributes["ApproximateReceiveCount"] != []string{"", "1", "2"}[i] {
				t.Fatalf("receive %d: count %s", i, got[0].Attributes["ApproximateReceiveCount"])
			}
			i++
		}
		if ctx.Err() != nil {
			t.Fatal("the message did not come back")
		}
	}
	var dead []types.Message
	for len(dead) == 0 && ctx.Err() == nil {
		dead = receive(dlq)
	}
	if len(dead) != 1 || *dead[0].Body != "receipt 881" || dead[0].Attributes["DeadLetterQueueSourceArn"] != arn("receipts") {
		t.Fatalf("the dead-letter queue holds %v", dead)
	}
	if _, err := cl.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &dlq, ReceiptHandle: dead[0].ReceiptHandle}); err != nil {
		t.Fatalf("give it back: %v", err)
	}
	if _, err := cl.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(arn("receipts-dlq"))}); err != nil {
		t.Fatalf("move task: %v", err)
	}
	var back []types.Message
	for len(back) == 0 && ctx.Err() == nil {
		back = receive(url)
	}
	if len(back) != 1 || *back[0].Body != "receipt 881" || back[0].Attributes["ApproximateReceiveCount"] != "1" {
		t.Fatalf("after the redrive the queue gives %v; want the message with a fresh count", back)
	}
}
