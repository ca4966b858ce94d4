package lab

// What the services of package lab/serviceset get from the lab: their
// publishes, produced to a topic through the lab's producer clients or
// sent to a queue, each into the history like any other message; where
// a publish went; what a name is; and which of their events are detail.

import (
	"context"
	"fmt"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/services"
)

// serviceHost is the lab as the services of one world see it
// (serviceset.Lab).
type serviceHost struct {
	l *Lab
	w *world
}

func (h serviceHost) Publisher(name string) services.Publisher { return h.l.publisher(h.w, name) }

func (h serviceHost) HasClient(name string) bool { return h.w.hasClient(name) }

// Names says whether a queue and whether a topic has that name.
func (h serviceHost) Names(name string) (queue, topic bool) {
	_, err := h.w.topic(name)
	return h.w.isQueue(name), err == nil
}

// Published finds where a client's last publish of a message went, when
// a partition acknowledged it.
func (h serviceHost) Published(client, msgID string) (topic string, partition int, offset int64, ok bool) {
	p, found := h.w.lastProduce(client, msgID)
	if !found || p.Outcome != checker.Acknowledged {
		return "", 0, 0, false
	}
	return p.Topic, p.Partition, p.Offset, true
}

// Detail says whether a service's event is one of many small ones: a
// buyer's, or a load's message's.
func (h serviceHost) Detail(e services.Event) bool {
	return h.w.buyers.Quiet(e.Service, e.Kind) || h.w.loads.FromLoad(e.MessageID) || h.w.loads.FromLoad(e.Cause)
}

// publisher sends a service's messages with a lab producer client named
// after the service, acks=all, keeping the service's message id and key.
// Each one goes into the history as a produce.
func (l *Lab) publisher(w *world, name string) services.Publisher {
	return services.PublisherFunc(func(ctx context.Context, dest string, m services.Message) (services.Outcome, error) {
		// The service's hold, if its work has one, keeps lab time for a
		// broker's answer only briefly.
		defer l.clock.Asking(ctx)()
		if w.isQueue(dest) {
			return w.queues.publish(ctx, name, dest, m)
		}
		if _, err := w.topic(dest); err != nil {
			if name == "checkout" {
				return services.Failed, fmt.Errorf("%w %q: create it with queue create %s (the lab creates no queue for the checkout service)",
					broker.ErrUnknownQueue, dest, dest)
			}
			return services.Failed, fmt.Errorf("%w %q: create it with topic create %s partitions=1 (the lab creates no topic for the %s service)",
				broker.ErrUnknownTopic, dest, dest, name)
		}
		ctx, cancel := w.bind(ctx)
		defer cancel()
		_, p, err := w.producer(ctx, name, producerKey{acks: broker.AcksAll})
		if err != nil {
			return services.Failed, err
		}
		now := l.clock.Now()
		rec := &Produce{MsgID: m.ID, Client: name, Topic: dest, Key: m.Key, Keyed: m.Key != "", Value: m.Value, Acks: "all",
			Partition: -1, Offset: -1, Outcome: checker.Pending, Sent: now}
		w.mu.Lock()
		w.history = append(w.history, rec)
		rec.Seq = len(w.history)
		w.mu.Unlock()
		msg := broker.Message{Topic: dest, Value: []byte(m.Value), MsgID: m.ID}
		if m.Key != "" {
			msg.Key = []byte(m.Key)
		}
		res := p.Produce(ctx, msg)
		w.settle([]*Produce{rec}, res, l.clock.Now())
		switch res[0].Outcome {
		case broker.OutcomeAcked:
			return services.Acknowledged, nil
		case broker.OutcomeUnknown:
			return services.Unknown, res[0].Err
		}
		return services.Failed, res[0].Err
	})
}

// lastProduce finds where a service's last publish of a message went.
func (w *world) lastProduce(client, msgID string) (Produce, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.history) - 1; i >= 0; i-- {
		if p := w.history[i]; p.Client == client && p.MsgID == msgID {
			return *p, true
		}
	}
	return Produce{}, false
}

// publish sends one message of a service to a queue as a client named
// after the service, keeping the service's message id. The send goes into
// the history like any other, so the checker counts it.
func (qs *queueSet) publish(ctx context.Context, client, queue string, m services.Message) (services.Outcome, error) {
	w := qs.w
	_, qc, err := qs.sender(client)
	if err != nil {
		return services.Failed, err
	}
	rec := &QueueSend{MsgID: m.ID, Client: client, Queue: queue, Value: m.Value, Outcome: checker.Pending, Sent: qs.l.clock.Now()}
	qs.mu.Lock()
	qs.sends = append(qs.sends, rec)
	qs.mu.Unlock()
	ctx, cancel := w.bind(ctx)
	defer cancel()
	res := qc.Send(ctx, queue, broker.QueueMessage{Body: []byte(m.Value), MsgID: m.ID})
	now := qs.l.clock.Now()
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if len(res) == 0 {
		rec.Outcome = checker.Unknown
		return services.Unknown, fmt.Errorf("send %s to %s: no answer", m.ID, queue)
	}
	rs := res[0]
	rec.Seq, rec.Attempts, rec.Answered = rs.Seq, rs.Attempts, now
	rec.Outcome = outcomeOf(rs.Outcome)
	if rs.Err != nil {
		rec.Err = rs.Err.Error()
	}
	switch {
	case rs.Rejected:
		rec.Outcome = checker.Rejected
		return services.Rejected, fmt.Errorf("%s is full: %w", queue, rs.Err)
	case rs.Outcome == broker.OutcomeAcked:
		return services.Acknowledged, nil
	case rs.Outcome == broker.OutcomeUnknown:
		return services.Unknown, rs.Err
	}
	return services.Failed, rs.Err
}

// handler returns the running service called name that takes deliveries
// (wallet, payments), for consumers and workers.
func (w *world) handler(name string) (services.Handler, bool) { return w.svc.Handler(name) }

// checkout returns the running checkout service.
func (w *world) checkout() (*services.Checkout, error) { return w.svc.Checkout() }

// AttachDatabase shows the SQLite file at path, which a program outside
// the lab writes, as the service name, with from saying whose it is: the
// screens show its tables as they change. The lab never writes it.
func (l *Lab) AttachDatabase(name, path, from string) error {
	w, err := l.world()
	if err != nil {
		return err
	}
	return w.svc.Attach(name, path, from)
}
