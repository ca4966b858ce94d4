package sqswire

import (
	"crypto/rand"
	"encoding/hex"
)

// What the nodes saw their SQS clients do, for a checker: each send with
// what its client learned, and each message a receive handed out.

// Fate is what a sending client learned about its message.
type Fate int

const (
	// Acked: the answer reached the client: the queue holds the message.
	Acked Fate = iota
	// Refused: the answer was an error; the queue does not hold it.
	Refused
	// Unknown: the answer was lost; the queue may hold the message.
	Unknown
)

// Sent is one message a client sent and its fate.
type Sent struct {
	Client string
	Queue  string
	MsgID  string
	Fate   Fate
}

// Received is one message handed to a client by a receive.
type Received struct {
	Client       string
	Queue        string
	MsgID        string
	ReceiveCount int
}

// Asked is one request a client made, whatever it asked and whatever the
// answer: a receive that found nothing is asked too.
type Asked struct {
	Client string
	Action string // ReceiveMessage, DeleteMessage, …; "" when it could not be read
}

// Observer hears what SQS clients do; its methods are called on the
// request's goroutine and must return quickly.
type Observer interface {
	Asked(Asked)
	Sent(Sent)
	Received(Received)
}

func requestID() string {
	var b [16]byte
	rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
