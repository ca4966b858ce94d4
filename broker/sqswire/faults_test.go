package sqswire

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/mqlab/mqlab/broker/internal/probe"
)

// The node a client talks to: isolated, it stops answering until the
// heal; killed, its endpoint refuses connections until the restart.
func TestEndpointIsolatedThenKilled(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	l := newLab(t, 3)
	ctx := ctxFor(t, 60*time.Second)
	cl := l.client("n3", "shop")
	url := createQueue(ctx, t, cl, "receipts", nil)
	send := func(ctx context.Context, opts ...func(*sqs.Options)) error {
		_, err := cl.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("receipt 881")}, opts...)
		return err
	}
	if err := l.c.Isolate("n3"); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := send(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a send to an isolated node: %v; want no answer before the client gives up", err)
	}
	// The node lets the held send go once it sees the client has hung up;
	// a heal before that would let it through, as a network would.
	if err := probe.Poll(ctxFor(t, 10*time.Second), func() bool { return l.s.holding.Load() == 0 }); err != nil {
		t.Fatalf("the isolated node still holds the send its client gave up on: %v", err)
	}
	l.c.Heal()
	if err := send(ctx); err != nil {
		t.Fatalf("after the heal: %v", err)
	}
	if err := l.c.Kill("n3"); err != nil {
		t.Fatal(err)
	}
	// The first attempt may go out on the connection the kill closed; the
	// next finds nobody listening.
	err = send(ctx, func(o *sqs.Options) { o.RetryMaxAttempts = 3 })
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("a send to a killed node: %v; want connection refused", err)
	}
	if err := l.c.Restart("n3"); err != nil {
		t.Fatal(err)
	}
	if err := send(ctx); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	if q, _ := l.s.queueState("receipts"); q.Counts.Sent != 2 {
		t.Fatalf("the queue took %d sends; want 2 (the isolated one never arrived)", q.Counts.Sent)
	}
}
