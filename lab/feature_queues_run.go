package lab

// A worker's run: the loop that receives from its queue client, the lab's
// order of work for each message, the acks, nacks and dead-lettering, and
// the deliveries it records for the checker.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/clients"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/services"
)

// receivePoll is the wall-time long poll of a worker's receive: short, so
// that a stop is quick and a paused clock is noticed.
const receivePoll = 100 * time.Millisecond

// workerReceiveMax bounds the messages one receive hands a worker with a
// rate.
const workerReceiveMax = 10

// workerRun is one life of a worker: a queue client and the goroutine
// that receives from it.
type workerRun struct {
	clientRun
	wk  *worker
	qc  *broker.QueueClient
	cmd command.Worker
	dlq bool // its queue has a dead-letter queue

	maxReceives int // its queue's max-receives: a nack at that receive dead-letters (0: none)

	// hot says the run's hold is on and its next receive is asked at once
	// in lab time: as the run starts, and after a full receive.
	hot bool
	// asked is the lab time the run began the receive whose messages it
	// is handling.
	asked time.Time

	// first is closed once the run's first receive has been answered (or
	// the run ended before): a start returns then, so that what the next
	// command does cannot reach the queue ahead of the worker it started.
	first     chan struct{}
	firstOnce sync.Once
}

// answered closes first, once.
func (ru *workerRun) answered() { ru.firstOnce.Do(func() { close(ru.first) }) }

// leave has nothing to say: a queue client holds no membership.
func (ru *workerRun) leave() error { return nil }

// vanish has nothing to drop: what the run held comes back after its
// visibility timeout.
func (ru *workerRun) vanish() {}

func (ru *workerRun) loop() {
	// One message at a time, unless a rate asks for throughput: then up
	// to a tenth of a second's worth per receive, as consumers poll.
	batch := 1
	if ru.opts.Rate > 0 {
		batch = max(1, min(workerReceiveMax, int(ru.opts.Rate/10)))
	}
	defer ru.answered()
	ru.clientRun.loop(func() (bool, error) {
		ru.pacer.Fetching()
		ds, err := ru.receive(batch, ru.hot)
		ru.hot = false
		ru.answered()
		if err != nil {
			ru.putDown()
			return false, err
		}
		// The messages are handled at once in lab time, acks too: the
		// run's hold keeps lab time for them from each message it takes.
		for _, d := range ds {
			if !ru.handle(d) {
				ru.putDown()
				return true, nil
			}
		}
		if len(ds) < batch {
			ru.pacer.Rest() // caught up: no backlog to catch up on
			ru.putDown()
			return false, nil
		}
		ru.hot = true
		return false, nil
	}, func(err error) bool { return errors.Is(err, broker.ErrClosed) })
}

// receive asks the queue for up to batch messages. As it starts and after
// a full receive (hot) the worker asks at once in lab time, so the hold
// stays on and this ask does not wait for a message: a machine slow to
// get round to it does not pass for lab time the worker spent between
// messages. When nothing is ready the hold is put down and the worker
// long-polls.
func (ru *workerRun) receive(batch int, hot bool) ([]broker.Delivery, error) {
	ru.asked = ru.clock.Now()
	if hot {
		answered := ru.held.Asking()
		ds, err := ru.qc.Receive(ru.soft, ru.cmd.Queue, batch, 0, 0)
		answered()
		if err != nil || len(ds) > 0 {
			return ds, err
		}
	}
	ru.putDown()
	ru.asked = ru.clock.Now()
	return ru.qc.Receive(ru.soft, ru.cmd.Queue, batch, 0, receivePoll)
}

// handle runs the worker's work for one message; false means the run is
// over (crashed or stopped).
func (ru *workerRun) handle(d broker.Delivery) bool {
	wk, qs := ru.wk, ru.wk.qs
	if !ru.pacer.Wait(ru.heldSoft, qs.l.clock, ru.opts.Rate) {
		return false // stopped: the message comes back after its visibility timeout
	}
	now := qs.l.clock.Now()
	ru.taken(now)
	qs.deliver(wk, d, now)
	if d.ReceiveCount > 1 {
		// A retry this worker or another asked for is back: retry_peak
		// counts it now, whenever the policy wanted it.
		ru.w.retries.ArrivedAsked(wk.queueOf(d), d.MsgID, d.ReceiveCount, now, ru.asked)
	}
	// A message given up on has been settled: nacked or dead-lettered.
	if !ru.process(&wk.clientCore, queueMessage{ru, d}, false) {
		return false
	}
	wk.mu.Lock()
	wk.holding = ""
	wk.mu.Unlock()
	return true
}

// queueMessage is a message in a worker's hands.
type queueMessage struct {
	ru *workerRun
	d  broker.Delivery
}

func (qm queueMessage) ack() { qm.ru.ack(qm.d) }

// work makes one attempt at the message (waiting while its service is not
// running) and, if it fails, settles it as the policy says.
func (qm queueMessage) work() workResult {
	ru, d := qm.ru, qm.d
	wk, qs := ru.wk, ru.wk.qs
	msg := services.Message{ID: d.MsgID, Value: string(d.Body)}
	wait := time.Duration(0)
	defer ru.keepHidden(d)()
	err, stopped := ru.try(&wk.clientCore, msg, &wait, func() {
		qs.event(false, "%s waits for %s, which is not running: it holds %s, which comes back to the queue if its visibility timeout runs out first",
			wk.name, ru.opts.Service, d.MsgID)
	})
	switch {
	case stopped:
		return workStopped
	case err == nil:
		qs.processedBy(&wk.clientCore, wk.queueOf(d), d.MsgID, "", d.Attributes[keyAttribute])
		if wait > 0 {
			wk.setWaiting("")
		}
		return workDone
	case errors.Is(err, services.ErrCrashed):
		ru.crashNow(fmt.Sprintf("%s crashed with %s while working on %s: %v", wk.name, ru.opts.Service, d.MsgID, err))
		return workCrashed
	}
	wk.failed(err)
	ru.settleFailure(d, err)
	return workGivenUp
}

// keepHidden, for a worker with extend=, moves d's visibility deadline to
// extend from now every half of extend until the returned stop is called:
// a slow but healthy worker keeps its message however long the work
// takes. Each move is on the timeline; one that fails (the message came
// back already) ends the renewals.
func (ru *workerRun) keepHidden(d broker.Delivery) (stop func()) {
	ext := ru.cmd.Extend
	if ext <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ru.soft)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ru.wk.qs.l.clock.Sleep(ctx, ext/2) == nil {
			if err := ru.qc.ChangeVisibility(ctx, ru.cmd.Queue, d.ReceiptHandle, ext); err != nil {
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

// settleFailure gives a failed message back, or dead-letters it.
func (ru *workerRun) settleFailure(d broker.Delivery, err error) {
	wk, qs := ru.wk, ru.wk.qs
	if ru.opts.AckBefore {
		qs.event(false, "%s failed on %s (receive %d): %v; it acked before the work, so the message is gone", wk.name, d.MsgID, d.ReceiveCount, err)
		return
	}
	permanent := errors.Is(err, clients.ErrPermanent) || errors.Is(err, services.ErrBadMessage)
	last := ru.opts.Retry != "none" && d.ReceiveCount >= ru.opts.MaxAttempts
	if permanent || last {
		why := fmt.Sprintf("after %d attempts", d.ReceiveCount)
		if permanent {
			why = "at once: the failure is permanent, retrying cannot help"
		}
		if !ru.dlq {
			// Nowhere to put it: give it back; the queue keeps it.
			ru.nackRetry(d, 0, err)
			qs.event(false, "%s gave up on %s %s: %v; queue %s has no dead-letter queue, so it is given back", wk.name, d.MsgID, why, err, ru.cmd.Queue)
			return
		}
		answered := ru.held.Asking()
		derr, _ := settleRetried(ru.hard, qs.w.timing.RequestTimeout, settleGiveBack, func(ctx context.Context) error {
			return ru.qc.DeadLetter(ctx, ru.cmd.Queue, d.ReceiptHandle, err.Error())
		})
		answered()
		if derr != nil {
			if ru.hard.Err() == nil {
				qs.event(false, "%s could not dead-letter %s: %v; it comes back after its visibility timeout", wk.name, d.MsgID, derr)
			}
			return
		}
		wk.mu.Lock()
		wk.stats.deadLettered++
		wk.mu.Unlock()
		qs.event(false, "%s moved %s to the dead-letter queue %s: %v", wk.name, d.MsgID, why, err)
		return
	}
	delay := ru.opts.Backoff(d.ReceiveCount, ru.rng)
	ru.nackRetry(d, delay, err)
	qs.event(true, "%s attempt %d on %s failed: %v; nacked, back in the queue in %v", wk.name, d.ReceiveCount, d.MsgID, err, delay.Round(time.Millisecond))
}

// nackRetry gives a failed message back to be tried again after delay,
// and records the retry unless the queue dead-letters it on this nack.
func (ru *workerRun) nackRetry(d broker.Delivery, delay time.Duration, reason error) {
	failed := ru.clock.Now()
	if !ru.nack(d, delay, reason) || ru.maxReceives > 0 && d.ReceiveCount >= ru.maxReceives {
		return
	}
	ru.w.retried(ru.wk.queueOf(d), ru.wk.name, d.MsgID, d.ReceiveCount+1, failed, delay)
}

// nack gives a message back to the queue; false when the nack failed.
func (ru *workerRun) nack(d broker.Delivery, delay time.Duration, reason error) bool {
	wk, qs := ru.wk, ru.wk.qs
	answered := ru.held.Asking()
	err, _ := settleRetried(ru.hard, qs.w.timing.RequestTimeout, settleGiveBack, func(ctx context.Context) error {
		return ru.qc.Nack(ctx, ru.cmd.Queue, d.ReceiptHandle, delay, reason.Error())
	})
	answered()
	wk.mu.Lock()
	if err == nil {
		wk.stats.nacks++
	} else {
		wk.lastErr = err.Error()
	}
	wk.mu.Unlock()
	if err != nil && ru.hard.Err() == nil {
		qs.event(false, "%s's nack of %s failed: %v; it comes back after its visibility timeout", wk.name, d.MsgID, err)
	}
	return err == nil
}

func (ru *workerRun) ack(d broker.Delivery) {
	wk, qs := ru.wk, ru.wk.qs
	// Each send of the ack has its own timeout (settleRetried), not the
	// one settle gives the whole call.
	err, gone := ru.settle(&wk.clientCore, &wk.stats.acks, &wk.stats.ackErrors, func(context.Context) error {
		err, _ := settleRetried(ru.hard, qs.w.timing.RequestTimeout, settleAck, func(ctx context.Context) error {
			return ru.qc.Ack(ctx, ru.cmd.Queue, d.ReceiptHandle)
		})
		return err
	})
	if gone {
		return
	}
	if err == nil {
		qs.mu.Lock()
		qs.acked[d.MsgID] = true
		qs.mu.Unlock()
		qs.finished.Add(wk.queueOf(d), qs.l.clock.Now())
		return
	}
	why := err.Error()
	if errors.Is(err, broker.ErrStaleReceipt) || errors.Is(err, broker.ErrUnknownReceipt) {
		why = "its visibility timeout ran out first, so the queue has given it to another delivery: " + why
		qs.mu.Lock()
		qs.staleAcks[wk.queueOf(d)]++
		qs.mu.Unlock()
	}
	qs.event(false, "%s's ack of %s failed: %s", wk.name, d.MsgID, why)
}

var workerCrashNotes = crashNotes{
	beforeWorkAcked: "it acked before the work, so nobody will process it",
	beforeWork:      "neither processed nor acked, so it comes back after its visibility timeout",
	afterWorkAcked:  "the work is done and it was acked before; nothing is lost or repeated",
	afterWork:       "the work is done but not acked, so it comes back after its visibility timeout and is processed again",
}

// crash crashes the worker at its armed crash point.
func (qm queueMessage) crash(at string) {
	qm.ru.crashNow(fmt.Sprintf("%s crashed at %s of %s (receive %d): %s", qm.ru.wk.name, at, qm.d.MsgID, qm.d.ReceiveCount,
		workerCrashNotes.at(at, qm.ru.opts.AckBefore)))
}

// crashNow stops the run as if its process died: nothing more is settled.
func (ru *workerRun) crashNow(text string) {
	wk := ru.wk
	wk.crashed()
	wk.qs.event(false, "%s (worker restart %s brings it back)", text, wk.name)
}

// queueOf is the queue a delivery came from.
func (wk *worker) queueOf(d broker.Delivery) string {
	if d.Queue != "" {
		return d.Queue
	}
	return wk.command().Queue
}

// deliver records one delivery; the first after a redrive is a replay.
func (qs *queueSet) deliver(wk *worker, d broker.Delivery, now time.Time) {
	qd := QueueDelivery{MsgID: d.MsgID, Client: wk.name, Queue: wk.queueOf(d), Seq: d.Seq, Key: d.Attributes[keyAttribute], ReceiveCount: d.ReceiveCount,
		Replay: d.Redrives > 0 && d.ReceiveCount == 1, Time: now, Received: d.ReceivedAt}
	if qd.Received.IsZero() {
		qd.Received = now
	}
	qs.mu.Lock()
	qs.deliveries = append(qs.deliveries, qd)
	qs.delivered[qd.Queue]++
	qs.mu.Unlock()
	wk.mu.Lock()
	wk.stats.received++
	wk.holding = d.MsgID
	wk.mu.Unlock()
	note := ""
	switch {
	case qd.Replay:
		note = " (a redrive replay)"
	case d.ReceiveCount > 1:
		note = " (delivered before)"
	}
	qs.event(true, "%s received %s from %s, receive count %d%s", wk.name, d.MsgID, qd.Queue, d.ReceiveCount, note)
}
