package command

// The queue commands: a queue's creation and deletion, sending to it, its
// workers, and moving its dead letters back.

import (
	"strconv"
	"time"
)

// QueueCreate creates a work queue.
type QueueCreate struct {
	Queue       string
	RF          int
	Visibility  time.Duration
	MaxReceives int
	DLQ         string
	MaxLength   int
	Overflow    string // "reject" or "drop-head"; "" for the broker's default (reject)
	TTL         time.Duration
	FIFO        bool
}

func (QueueCreate) Name() string { return "queue create" }
func (c QueueCreate) String() string {
	return words("queue", "create", c.Queue).
		optIf(c.RF != 0, "rf", strconv.Itoa(c.RF)).
		optIf(c.Visibility != 0, "visibility", formatDuration(c.Visibility)).
		optIf(c.MaxReceives != 0, "max-receives", strconv.Itoa(c.MaxReceives)).
		optIf(c.DLQ != "", "dlq", c.DLQ).
		optIf(c.MaxLength != 0, "max-length", strconv.Itoa(c.MaxLength)).
		optIf(c.Overflow != "", "overflow", c.Overflow).
		optIf(c.TTL != 0, "ttl", formatDuration(c.TTL)).
		optIf(c.FIFO, "fifo", "true").String()
}

func buildQueueCreate(p *parser, _ *Spec) (Command, *posError) {
	name, o, err := p.nameThenOptions("a queue name")
	if err != nil {
		return nil, err
	}
	c := QueueCreate{Queue: name, RF: o.int("rf", 0), Visibility: o.dur("visibility"), MaxReceives: o.int("max-receives", 0),
		DLQ: o.str("dlq"), MaxLength: o.int("max-length", 0), Overflow: o.str("overflow"), TTL: o.dur("ttl"), FIFO: o.bool("fifo")}
	if c.DLQ == c.Queue {
		return nil, errAt(o["dlq"].col, "a queue cannot be its own dead-letter queue; name another, e.g. dlq=%s-dlq", c.Queue)
	}
	if c.Overflow != "" && c.MaxLength == 0 {
		return nil, errAt(o["overflow"].col, "overflow= says what a full queue does; give it a max-length=N to fill")
	}
	return c, nil
}

// QueueDelete deletes a work queue with the messages it holds.
type QueueDelete struct {
	Queue string
}

func (QueueDelete) Name() string     { return "queue delete" }
func (c QueueDelete) String() string { return words("queue", "delete", c.Queue).String() }

func buildQueueDelete(p *parser, _ *Spec) (Command, *posError) {
	name, _, err := p.nameThenOptions("a queue name")
	if err != nil {
		return nil, err
	}
	return QueueDelete{Queue: name}, nil
}

// Send puts Count messages on a queue.
type Send struct {
	Queue    string
	Key      string
	Keyed    bool
	Value    string
	HasValue bool
	Delay    time.Duration
	Count    int
	As       string
	Group    string // a FIFO queue's message group ({n} is the message's number)
	DedupeID string // a FIFO queue's deduplication id ({n} likewise)
}

func (Send) Name() string { return "send" }
func (c Send) String() string {
	return words("send", c.Queue).
		optIf(c.HasValue, "value", quoteText(c.Value)).
		optIf(c.Keyed, "key", quoteText(c.Key)).
		optIf(c.Delay != 0, "delay", formatDuration(c.Delay)).
		optIf(c.Count != DefaultCount, "count", strconv.Itoa(c.Count)).
		optIf(c.As != "", "as", c.As).
		optIf(c.Group != "", "group", quoteText(c.Group)).
		optIf(c.DedupeID != "", "dedupe-id", quoteText(c.DedupeID)).String()
}

func buildSend(p *parser, _ *Spec) (Command, *posError) {
	queue, o, err := p.nameThenOptions("a queue")
	if err != nil {
		return nil, err
	}
	c := Send{Queue: queue, Delay: o.dur("delay"), Count: o.int("count", DefaultCount), As: o.str("as")}
	c.Value, c.HasValue = o.text("value")
	c.Key, c.Keyed = o.text("key")
	c.Group, _ = o.text("group")
	c.DedupeID, _ = o.text("dedupe-id")
	return c, nil
}

// Worker starts, restarts or stops a worker (a competing consumer of a queue).
type Worker struct {
	Action  string
	Client  string
	Queue   string
	Options ClientOptions
	// Extend, while the work on a message lasts, keeps the message hidden
	// this much longer, renewed every half of it, as an SQS consumer calls
	// ChangeMessageVisibility; 0: never.
	Extend time.Duration
}

func (Worker) Name() string { return "worker" }
func (c Worker) String() string {
	p := words("worker", c.Action, c.Client).optIf(c.Queue != "", "queue", c.Queue)
	return c.Options.print(p).optIf(c.Extend != 0, "extend", formatDuration(c.Extend)).String()
}

func buildWorker(p *parser, _ *Spec) (Command, *posError) {
	action, client, o, err := clientAction(p, "queue")
	if err != nil {
		return nil, err
	}
	return Worker{Action: action, Client: client, Queue: o.str("queue"), Options: clientOpts(o), Extend: o.dur("extend")}, nil
}

// Redrive moves a dead-letter queue's messages back to a queue.
type Redrive struct {
	DLQ string
	To  string // "": the queue that dead-lettered them
}

func (Redrive) Name() string { return "redrive" }
func (c Redrive) String() string {
	return words("redrive", c.DLQ).optIf(c.To != "", "to", c.To).String()
}

func buildRedrive(p *parser, _ *Spec) (Command, *posError) {
	dlq, o, err := p.nameThenOptions("a dead-letter queue")
	if err != nil {
		return nil, err
	}
	return Redrive{DLQ: dlq, To: o.str("to")}, nil
}
