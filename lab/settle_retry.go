package lab

// A worker settles each message — ack, nack, dead-letter — as an SDK sends
// a call: once more, after a short backoff, when the answer did not come
// (a timeout, no leader, a reply lost on the way back), a bounded number
// of times.

import (
	"context"
	"errors"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/raftnet"
	"github.com/mqlab/mqlab/lab/clock"
)

// settleAttempts bounds the sends of one settle: the first and two more,
// as the AWS SDKs' standard retry mode makes three attempts.
const settleAttempts = 3

// settleBackoff is the wait before the first resend; it doubles for the
// next.
const settleBackoff = 50 * time.Millisecond

// settleKind is what a settle does, which decides what a stale answer to
// a resend means.
type settleKind int

const (
	// settleAck deletes the message. The queue answers a repeated ack
	// of a message it deleted as done, so a stale answer to a resend
	// means the first never took effect: the message came back first.
	settleAck settleKind = iota
	// settleGiveBack gives the message back (a nack) or moves it to the
	// dead-letter queue. A stale answer to a resend means the first took
	// effect and only its reply was lost, or the message came back
	// meanwhile: either way it is no longer this delivery's to settle,
	// which is what the call was for.
	settleGiveBack
)

// resendable says whether a settle that failed with err is sent again:
// the broker may not have done it, and doing it again is safe. A request
// the network lost on its way (the lab's lost-ack fault) is not: the
// learner asked for an ack that never arrives. Refusals (a stale receipt,
// a bad request) are answers, not silence.
func resendable(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, broker.ErrNoLeader) ||
		errors.Is(err, broker.ErrNotLeader) || errors.Is(err, broker.ErrUnknownOutcome) ||
		errors.Is(err, raftnet.ErrUnreachable) || errors.Is(err, raftnet.ErrReplyLost)
}

// settleRetried sends req up to settleAttempts times, each under its own
// timeout, while run lives, and returns the last answer and how many
// sends it took. A stale or unknown receipt in answer to a resend is done
// for a settleGiveBack (see settleKind).
func settleRetried(run context.Context, timeout time.Duration, kind settleKind, req func(context.Context) error) (err error, sends int) {
	backoff := settleBackoff
	for sends = 1; ; sends++ {
		ctx, cancel := context.WithTimeout(run, timeout)
		err = req(ctx)
		cancel()
		if sends > 1 && kind == settleGiveBack && (errors.Is(err, broker.ErrStaleReceipt) || errors.Is(err, broker.ErrUnknownReceipt)) {
			return nil, sends
		}
		if err == nil || sends == settleAttempts || run.Err() != nil || !resendable(err) {
			return err, sends
		}
		if clock.SleepWall(run, backoff) != nil {
			return err, sends
		}
		backoff *= 2
	}
}
