package lab

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
)

// client is a named lab client. Today every client produces; consumers
// and workers will join as the broker grows them. A client's messages are
// numbered: producer-1, producer-2, … (the message id travels with the
// record, and a retry keeps it).
type client struct {
	name string
	seq  atomic.Int64

	mu        sync.Mutex // held while a producer is made, which may ask the controller
	producers map[producerKey]*broker.Producer
}

// producerKey is one producer configuration: the lab keeps one broker
// producer per configuration a client has used, so that an idempotent one
// keeps its producer id and sequence numbers from one command to the next.
type producerKey struct {
	acks       broker.Acks
	idempotent bool
	batch      int
}

func newClient(name string) *client {
	return &client{name: name, producers: map[producerKey]*broker.Producer{}}
}

func (c *client) nextID() string { return fmt.Sprintf("%s-%d", c.name, c.seq.Add(1)) }

// producer returns the client's producer for a configuration, making the
// client and the producer as needed. A new client is registered only once
// its producer exists, so a failure leaves no trace.
func (w *world) producer(ctx context.Context, name string, k producerKey) (*client, *broker.Producer, error) {
	w.mu.Lock()
	cl := w.clients[name]
	fresh := cl == nil
	if fresh {
		cl = newClient(name)
	}
	w.mu.Unlock()

	cl.mu.Lock()
	p := cl.producers[k]
	if p == nil {
		var err error
		p, err = w.cluster.NewProducer(ctx, broker.ProducerConfig{ClientID: name, Acks: k.acks, Idempotent: k.idempotent, BatchSize: k.batch})
		if err != nil {
			cl.mu.Unlock()
			return nil, nil, err
		}
		cl.producers[k] = p
	}
	cl.mu.Unlock()

	if fresh {
		w.mu.Lock()
		if existing := w.clients[name]; existing != nil {
			cl = existing // made by a command running at the same time
			cl.mu.Lock()
			if cl.producers[k] == nil {
				cl.producers[k] = p
			}
			p = cl.producers[k]
			cl.mu.Unlock()
		} else {
			w.clients[name] = cl
		}
		w.mu.Unlock()
	}
	return cl, p, nil
}

// Produce is one message a client produced, and what became of it.
type Produce struct {
	Seq        int             `json:"seq"` // its place in the history, from 1
	MsgID      string          `json:"msg_id"`
	Client     string          `json:"client"`
	Topic      string          `json:"topic"`
	Key        string          `json:"key,omitempty"`
	Keyed      bool            `json:"keyed,omitempty"`
	Value      string          `json:"value"`
	Tombstone  bool            `json:"tombstone,omitempty"` // a null value
	Acks       string          `json:"acks"`
	Idempotent bool            `json:"idempotent,omitempty"`
	Partition  int             `json:"partition"` // -1 until known
	Offset     int64           `json:"offset"`    // -1 unless acknowledged with an offset
	Epoch      uint64          `json:"epoch,omitempty"`
	Outcome    checker.Outcome `json:"outcome"`
	Err        string          `json:"error,omitempty"`
	Attempts   int             `json:"attempts,omitempty"`
	Duplicate  bool            `json:"duplicate,omitempty"` // the partition recognised a repeat
	Sent       time.Time       `json:"sent"`                // lab time
	Answered   time.Time       `json:"answered,omitempty"`
}

// prepare numbers n messages for a client, records them as pending in the
// history and returns them ready to send. first is the number {n} stands
// for in the first message's key and value.
func (w *world) prepare(cl *client, topic string, first, n int, acks string, idem bool, pinned bool, partition int,
	key func(i int) ([]byte, bool), value func(i int, id string) []byte, now time.Time) ([]broker.Message, []*Produce) {
	msgs := make([]broker.Message, n)
	recs := make([]*Produce, n)
	for i := range msgs {
		id := cl.nextID()
		k, keyed := key(first + i)
		v := value(first+i, id)
		msgs[i] = broker.Message{Topic: topic, Key: k, Value: v, MsgID: id, Partition: partition, Pinned: pinned}
		recs[i] = &Produce{MsgID: id, Client: cl.name, Topic: topic, Key: string(k), Keyed: keyed, Value: string(v), Tombstone: v == nil,
			Acks: acks, Idempotent: idem, Partition: -1, Offset: -1, Outcome: checker.Pending, Sent: now}
	}
	w.mu.Lock()
	for _, r := range recs {
		w.history = append(w.history, r)
		r.Seq = len(w.history)
	}
	w.mu.Unlock()
	return msgs, recs
}

// settle records the broker's answers in the history.
func (w *world) settle(recs []*Produce, res []broker.ProduceResult, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, r := range res {
		p := recs[i]
		p.Partition, p.Offset, p.Epoch, p.Attempts, p.Duplicate, p.Answered = r.Partition, r.Offset, r.Epoch, r.Attempts, r.Duplicate, now
		p.Outcome = outcomeOf(r.Outcome)
		if r.Err != nil {
			p.Err = r.Err.Error()
		}
	}
}

func outcomeOf(o broker.Outcome) checker.Outcome {
	switch o {
	case broker.OutcomeAcked:
		return checker.Acknowledged
	case broker.OutcomeSent:
		return checker.Sent
	case broker.OutcomeUnknown:
		return checker.Unknown
	}
	return checker.Failed
}

// History returns a copy of every produce so far in this cluster, in order.
func (l *Lab) History() []Produce {
	w, err := l.world()
	if err != nil {
		return nil
	}
	return w.historyCopy()
}

func (w *world) historyCopy() []Produce {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Produce, len(w.history))
	for i, p := range w.history {
		out[i] = *p
	}
	return out
}

// checkerHistory is the history in the checker's terms.
func (w *world) checkerHistory() checker.History {
	var h checker.History
	for _, p := range w.historyCopy() {
		h.Produces = append(h.Produces, checker.Produce{MsgID: p.MsgID, Client: p.Client, Topic: p.Topic,
			Partition: p.Partition, Offset: p.Offset, Key: p.Key, Tombstone: p.Tombstone, Outcome: p.Outcome})
	}
	return h
}
