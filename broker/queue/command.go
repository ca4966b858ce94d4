package queue

import "time"

// Op is the kind of a command.
type Op uint8

// The commands a queue applies. Each carries Now, the proposing leader's
// clock; the queue never goes back in time (it keeps the latest Now seen).
const (
	OpSend             Op = iota + 1 // Messages from a client
	OpReceive                        // up to Max ready messages to Consumer for Visibility
	OpAck                            // delete the messages of Receipts
	OpNack                           // give Receipts back, ready after Delay, with Reason
	OpChangeVisibility               // set Receipts' deadline to Now + Visibility
	OpDeadLetter                     // move Receipts to the dead-letter queue at once, with Reason
	OpTick                           // only the clock: deadlines, delays and TTL take effect
	OpTransferIn                     // a message moving here from another queue (TransferID dedupes)
	OpMoved                          // the destination holds message Seq: drop it here
	OpRedrive                        // move up to Max ready messages of this dead-letter queue back (to To, or each to its Source)
	OpPurge                          // drop every message the queue holds (Consumer asked), as SQS's PurgeQueue
)

var opNames = [...]string{"", "send", "receive", "ack", "nack", "change-visibility", "dead-letter", "tick", "transfer-in", "moved", "redrive", "purge"}

func (o Op) String() string {
	if int(o) < len(opNames) && o != 0 {
		return opNames[o]
	}
	return "op?"
}

// NewMessage is one message a client sends.
type NewMessage struct {
	MsgID      string
	Body       []byte
	Attributes map[string]string
	Delay      time.Duration // invisible this long after the send
}

// Transfer is a message on its way from one queue to another.
type Transfer struct {
	MsgID        string
	Body         []byte
	Attributes   map[string]string
	SentAt       int64
	ReceiveCount int
	LastError    string
	Source       string // the queue it leaves
	Redrives     int
}

// Command is one replicated operation on a queue. Fields that do not apply
// to the Op are zero.
type Command struct {
	Op  Op
	Now int64 // the leader's clock, unix nanos
	// ReqID lets the proposer recognise its own command when it is
	// applied. The queue's state ignores it.
	ReqID uint64

	Messages []NewMessage // OpSend

	Consumer   string        // OpReceive
	Max        int           // OpReceive: at most this many; OpRedrive: 0 for all
	Visibility time.Duration // OpReceive (0: the queue's default), OpChangeVisibility
	Limit      int           // OpReceive: the consumer's in-flight cap (prefetch), 0 for none

	Receipts []string      // OpAck, OpNack, OpChangeVisibility, OpDeadLetter
	Delay    time.Duration // OpNack
	Reason   string        // OpNack, OpDeadLetter

	TransferID string   // OpTransferIn, OpMoved
	Kind       MoveKind // OpTransferIn
	Transfer   Transfer // OpTransferIn
	Seq        uint64   // OpMoved

	To string // OpRedrive: "" sends each message back to its Source
}

// SendOutcome is the fate of one sent message: a sequence number, or an
// error (ErrFull).
type SendOutcome struct {
	Seq uint64
	Err error
	// Duplicate: a FIFO queue dropped the send as a repeat; Seq and MsgID
	// are the original's.
	Duplicate bool
	MsgID     string
}

// Delivery is one message handed to a consumer.
type Delivery struct {
	Seq          uint64
	MsgID        string
	Body         []byte
	Attributes   map[string]string
	Receipt      string
	ReceiveCount int
	SentAt       int64
	EnqueuedAt   int64
	ReceivedAt   int64 // the command's Now
	Deadline     int64 // visible again at this time unless acked
	LastError    string
	Source       string
	Redrives     int
}

// ChangeKind says what happened to a message.
type ChangeKind uint8

// What Apply reports happened to messages, for events.
const (
	ChSent          ChangeKind = iota + 1 // accepted from a client (Due set if delayed)
	ChRejected                            // refused: the queue is full
	ChDelivered                           // handed to Consumer (ReceiveCount > 1 means again)
	ChAcked                               // deleted by Consumer's ack
	ChNacked                              // given back by Consumer (Due: ready again then)
	ChVisibility                          // deadline moved to Due
	ChTimedOut                            // visibility ran out: back in the queue
	ChExpired                             // dropped by TTL
	ChDeadLettering                       // marked to move to Queue (Reason)
	ChDeadLettered                        // now held by Queue, dropped here
	ChRedriving                           // marked to move back to Queue
	ChRedriven                            // now held by Queue, dropped here
	ChArrived                             // came from Queue (Kind says why)
	ChDropped                             // dropped from the head of a full queue to make room
)

// Change is one thing that happened to one message during Apply.
type Change struct {
	Kind         ChangeKind
	Seq          uint64
	MsgID        string
	Consumer     string
	ReceiveCount int
	Due          int64
	Reason       string
	Queue        string   // the other queue of a move
	Move         MoveKind // for ChArrived
}

// Result is what Apply returns.
type Result struct {
	// Err fails the whole command (bad input); nothing changed except
	// what the clock did.
	Err       error
	Sent      []SendOutcome // OpSend: one per message
	Delivered []Delivery    // OpReceive
	Errs      []error       // one per receipt (OpAck, OpNack, OpChangeVisibility, OpDeadLetter)
	Seq       uint64        // OpTransferIn: the message's number here
	Duplicate bool          // OpTransferIn: this transfer arrived before
	Redriving int           // OpRedrive: messages marked to move
	Changes   []Change      // everything that happened, in order
}
