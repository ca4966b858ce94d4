package lab

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker"
)

// settleScene is a queue with one message received by a queue client
// that makes each call once, as the worker's SDK-like retry is to be
// seen on its own: it returns the lab, its cluster, the client and the
// delivery's receipt.
func settleScene(t *testing.T) (*Lab, *broker.Cluster, *broker.QueueClient, string) {
	t.Helper()
	l := newLab(t)
	mustRun(t, l, "queue create q visibility=60s", "send q")
	w, err := l.world()
	if err != nil {
		t.Fatal(err)
	}
	qc, err := w.cluster.NewQueueClient(broker.QueueClientConfig{ClientID: "sdk", Once: true})
	if err != nil {
		t.Fatal(err)
	}
	var ds []broker.Delivery
	waitFor(t, 10*time.Second, "the message received", func() bool {
		ds, err = qc.Receive(ctxFor(t, 5*time.Second), "q", 1, 0, 100*time.Millisecond)
		return err == nil && len(ds) == 1
	})
	return l, w.cluster, qc, ds[0].ReceiptHandle
}

// A nack whose reply is lost was applied: the resend is answered with a
// stale receipt, which means the message is back in the queue, so the
// nack is done and the message is ready again at once, not after its
// 60 s visibility timeout.
func TestNackResentAfterLostReply(t *testing.T) {
	t.Parallel()
	_, c, qc, receipt := settleScene(t)
	if err := c.DropNextReply("sdk"); err != nil {
		t.Fatal(err)
	}
	err, sends := settleRetried(context.Background(), 2*time.Second, settleGiveBack, func(ctx context.Context) error {
		return qc.Nack(ctx, "q", receipt, 0, "transient")
	})
	if err != nil || sends != 2 {
		t.Fatalf("nack: %v after %d sends; want done after 2 (the lost reply, then a stale answer)", err, sends)
	}
	ds, err := qc.Receive(ctxFor(t, 10*time.Second), "q", 1, 0, 5*time.Second)
	if err != nil || len(ds) != 1 || ds[0].ReceiveCount != 2 {
		t.Fatalf("after the nack: %+v, %v; want the message back at once, on its second receive", ds, err)
	}
}

// An ack whose reply is lost is sent again and the queue, which knows it
// deleted the message, answers the resend as done: the message is gone.
func TestAckResentAfterLostReply(t *testing.T) {
	t.Parallel()
	l, c, qc, receipt := settleScene(t)
	if err := c.DropNextReply("sdk"); err != nil {
		t.Fatal(err)
	}
	err, sends := settleRetried(context.Background(), 2*time.Second, settleAck, func(ctx context.Context) error {
		return qc.Ack(ctx, "q", receipt)
	})
	if err != nil || sends != 2 {
		t.Fatalf("ack: %v after %d sends; want done after 2 (the lost reply, then the repeat)", err, sends)
	}
	mustRun(t, l, "expect depth(q) == 0")
}

// What is sent again and what is not, whatever the broker.
func TestSettleRetriedPolicy(t *testing.T) {
	t.Parallel()
	lost := errors.New("reply lost")
	for _, c := range []struct {
		name    string
		kind    settleKind
		answers []error
		want    error
		sends   int
	}{
		{"no leader, then done", settleAck, []error{broker.ErrNoLeader, nil}, nil, 2},
		{"a stale ack after an unknown outcome failed", settleAck, []error{broker.ErrUnknownOutcome, broker.ErrStaleReceipt}, broker.ErrStaleReceipt, 2},
		{"a stale nack after an unknown outcome is done", settleGiveBack, []error{broker.ErrUnknownOutcome, broker.ErrStaleReceipt}, nil, 2},
		{"a stale first answer is not done", settleGiveBack, []error{broker.ErrStaleReceipt}, broker.ErrStaleReceipt, 1},
		{"a refusal is not sent again", settleAck, []error{broker.ErrInvalid}, broker.ErrInvalid, 1},
		{"an unexplained error is not sent again", settleAck, []error{lost}, lost, 1},
		{"three sends at most", settleGiveBack, []error{broker.ErrNoLeader, broker.ErrNoLeader, broker.ErrNoLeader, nil}, broker.ErrNoLeader, 3},
	} {
		i := 0
		err, sends := settleRetried(context.Background(), time.Second, c.kind, func(context.Context) error {
			i++
			return c.answers[i-1]
		})
		if !errors.Is(err, c.want) || (c.want == nil && err != nil) || sends != c.sends {
			t.Errorf("%s: %v after %d sends; want %v after %d", c.name, err, sends, c.want, c.sends)
		}
	}
	// Each send has a timeout of its own: a send that hangs does not use
	// up the next one's time.
	var deadlines []time.Time
	err, sends := settleRetried(context.Background(), 20*time.Millisecond, settleAck, func(ctx context.Context) error {
		d, _ := ctx.Deadline()
		deadlines = append(deadlines, d)
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, context.DeadlineExceeded) || sends != settleAttempts {
		t.Fatalf("hanging sends: %v after %d; want a timeout after %d", err, sends, settleAttempts)
	}
	for i := 1; i < len(deadlines); i++ {
		if !deadlines[i].After(deadlines[i-1]) {
			t.Errorf("send %d's deadline %v is not after send %d's %v", i+1, deadlines[i], i, deadlines[i-1])
		}
	}
}
