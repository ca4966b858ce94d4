package kafkawire

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// conn is one client connection to one node. Requests are handled one at
// a time, in order, as a Kafka broker handles one connection's requests,
// so answers go back in the order asked.
type conn struct {
	s      *Server
	node   string
	nc     net.Conn
	ctx    context.Context // ends when the connection closes
	cancel context.CancelFunc

	mu        sync.Mutex
	client    string // the client.id of its last request
	closeOnce sync.Once
	reason    string // why the lab closed it

	said   string // the last error answer put in the timeline, and when
	saidAt time.Time

	label string // the node and the client's address, for a checker

	// The group member whose group requests the connection carries, and
	// the one its fetches were last attributed to (see attribute);
	// guarded by Server.mu.
	owner, fetcher memberKey

	// scratch is the reading goroutine's buffer to decompress a
	// produce's records into while it checks them (see readBatch).
	scratch []byte
}

func (cn *conn) clientID() string {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.client
}

// close ends the connection; reason, if any, is what the closing event
// says.
func (cn *conn) close(reason string) {
	cn.closeOnce.Do(func() {
		cn.mu.Lock()
		cn.reason = reason
		cn.mu.Unlock()
		cn.cancel()
		cn.nc.Close()
	})
}

// request is one decoded request and what a handler needs to answer it.
type request struct {
	cn      *conn
	ctx     context.Context
	client  string
	version int16
	// batches are a produce's record batches, decoded while the request
	// before it was handled, by partition.
	batches map[broker.TopicPartition]decodedBatches
	// splices are the segment file ranges a fetch answers with, in the
	// order their markers appear in its response.
	splices []splice
}

// decodedBatches is one partition's batches of a produce, or why they do
// not decode.
type decodedBatches struct {
	batches []producedBatch
	err     error
}

// front is the node as the request's client addresses it.
func (r *request) front() broker.Front { return r.cn.s.c.Front(r.cn.node, r.client) }

// Errors a handler returns instead of an answer.
var (
	// errUnanswered: the node is up but unreachable (isolated); the client
	// gets no answer and gives up on its own.
	errUnanswered = errors.New("the node is cut off and does not answer")
	// errLost: the request or its reply was lost (an armed fault); the
	// connection breaks.
	errLost = errors.New("lost on the network")
	// errNodeDown: the node was killed while it handled the request. A
	// dead broker answers nothing; its connections just end, and the
	// client looks for the partition's new leader. An error code instead
	// (REQUEST_TIMED_OUT, say) would reach a consumer's application as
	// an error, and kcat, for one, exits on it.
	errNodeDown = errors.New("the node went down")
)

// netErr turns the network's faults into the connection's fate: a call
// that did not get through because the node is cut off goes unanswered,
// a lost request or reply breaks the connection, and so does any failure
// of a node that has been killed meanwhile. Other errors are for the
// answer.
func (r *request) netErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raftnet.ErrReplyLost), errors.Is(err, raftnet.ErrRequestLost):
		return fmt.Errorf("%w: %v", errLost, err)
	case !r.cn.s.c.NodeUp(r.cn.node):
		return fmt.Errorf("%w: %v", errNodeDown, err)
	case errors.Is(err, raftnet.ErrUnreachable):
		return fmt.Errorf("%w: %v", errUnanswered, err)
	}
	return nil
}

const readBuffer = 64 << 10

func (cn *conn) serve() {
	defer cn.s.wg.Done()
	defer cn.s.forget(cn)
	defer cn.close("")
	// Frames are read and decoded one ahead of the one being handled, so
	// a produce's records decompress while the one before it waits for
	// raft. They are still handled, and answered, one at a time in order.
	frames := make(chan readFrame, 1)
	cn.s.wg.Add(1)
	go cn.read(frames)
	for f := range frames {
		err := f.err
		var ans *answer
		if err == nil {
			ans, err = cn.handleParsed(f.pr, f.parseErr, f.batches)
			if errors.Is(err, errUnanswered) {
				ans, err = cn.hold(f)
			}
		}
		if err != nil {
			switch {
			case errors.Is(err, errUnanswered):
			case errors.Is(err, errLost), errors.Is(err, errNodeDown):
			default:
				cn.report(err.Error() + ": the connection is closed")
			}
			return
		}
		if ans != nil {
			if err := ans.writeTo(cn.nc); err != nil {
				return
			}
		}
	}
}

// readFrame is one frame as read and decoded, or why reading stopped.
type readFrame struct {
	pr       parsedRequest
	parseErr error
	batches  map[broker.TopicPartition]decodedBatches
	err      error // reading stopped: the last frame
}

// read reads frames until the connection ends, decoding each, a produce's
// record batches included.
func (cn *conn) read(frames chan<- readFrame) {
	defer cn.s.wg.Done()
	defer close(frames)
	br := bufio.NewReaderSize(cn.nc, readBuffer)
	var size [4]byte
	send := func(f readFrame) bool {
		select {
		case frames <- f:
			return true
		case <-cn.ctx.Done():
			return false
		}
	}
	for {
		if _, err := io.ReadFull(br, size[:]); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				send(readFrame{err: errors.New("closed the connection in the middle of a frame's size")})
			}
			return
		}
		n := int32(binary.BigEndian.Uint32(size[:]))
		if n < 8 || n > cn.s.cfg.MaxRequestBytes {
			send(readFrame{err: fmt.Errorf("sent a frame of %d bytes; a request takes 8 to %d bytes", n, cn.s.cfg.MaxRequestBytes)})
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			if cn.ctx.Err() == nil {
				send(readFrame{err: fmt.Errorf("sent a frame of %d bytes and stopped before its end", n)})
			}
			return
		}
		var f readFrame
		f.pr, f.parseErr = safeParse(body)
		if req, ok := f.pr.req.(*kmsg.ProduceRequest); ok && f.parseErr == nil {
			f.batches = decodeProduce(f.pr.client, req, cn.s.cfg.Observer != nil, &cn.scratch)
		}
		if !send(f) {
			return
		}
	}
}

// safeParse is parseRequest, with a panic turned into an error.
func safeParse(body []byte) (pr parsedRequest, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sent a request the node could not decode (%v)", p)
		}
	}()
	return parseRequest(body)
}

// decodeProduce checks every partition's record batches of a produce,
// decoding their records too when records is set (for an observer), and
// otherwise decompressing into scratch.
func decodeProduce(client string, req *kmsg.ProduceRequest, records bool, scratch *[]byte) map[broker.TopicPartition]decodedBatches {
	out := map[broker.TopicPartition]decodedBatches{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := broker.TopicPartition{Topic: t.Topic, Partition: int(p.Partition)}
			bs, err := readBatchesFor(client, tp, p.Records, records, scratch)
			out[tp] = decodedBatches{batches: bs, err: err}
		}
	}
	return out
}

// hold keeps the request of a cut-off node, as TCP keeps unacknowledged
// bytes, and handles it once the node can be reached again; the client
// may give up first and close the connection. Nothing of the request ran
// while the node was cut off, so handling it later is handling it once.
func (cn *conn) hold(f readFrame) (*answer, error) {
	deadline := time.Now().Add(2 * time.Minute)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for time.Now().Before(deadline) {
		select {
		case <-cn.ctx.Done():
			return nil, errUnanswered
		case <-t.C:
		}
		out, err := cn.handleParsed(f.pr, f.parseErr, f.batches)
		if !errors.Is(err, errUnanswered) {
			return out, err
		}
	}
	return nil, errUnanswered
}

func (cn *conn) report(text string) {
	who := cn.clientID()
	if who == "" {
		who = "a client at " + cn.nc.RemoteAddr().String()
	}
	cn.s.c.Report(broker.Event{Node: cn.node, Client: cn.clientID(), Text: fmt.Sprintf("%s on %s %s", who, cn.node, text)})
}

// handleParsed answers a decoded frame with the framed answer (nil when
// the request wants none, as a produce with acks=0); batches, when set,
// are a produce's record batches decoded already.
func (cn *conn) handleParsed(pr parsedRequest, err error, batches map[broker.TopicPartition]decodedBatches) (out *answer, rerr error) {
	var r *request
	defer func() {
		if p := recover(); p != nil {
			out, rerr = nil, fmt.Errorf("sent a request the node could not handle (%v)", p)
		}
		if out == nil && r != nil {
			for _, s := range r.splices {
				s.file.File.Close()
			}
		}
	}()
	if pr.client != "" || err == nil {
		cn.mu.Lock()
		cn.client = pr.client
		cn.mu.Unlock()
	}
	if errors.Is(err, errUnsupportedVersions) {
		return &answer{parts: [][]byte{frame(pr.corr, false, unsupportedVersions())}}, nil
	}
	if err != nil {
		return nil, err
	}
	r = &request{cn: cn, ctx: cn.ctx, client: pr.client, version: pr.version, batches: batches}
	resp, herr := apis[pr.key].handle(r, pr.req)
	if herr != nil || resp == nil {
		return nil, herr
	}
	resp.SetVersion(pr.version)
	framed := frame(pr.corr, resp.IsFlexible() && pr.key != apiVersionsKey, resp)
	if len(r.splices) == 0 {
		return &answer{parts: [][]byte{framed}}, nil
	}
	a, err := spliceFrame(framed, resp.IsFlexible(), r.splices)
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// parsedRequest is a request frame, decoded.
type parsedRequest struct {
	key, version int16
	corr         int32
	client       string
	req          kmsg.Request
}

// errUnsupportedVersions: an ApiVersions in a version the node does not
// serve, which Kafka answers (in version 0) rather than refuses.
var errUnsupportedVersions = errors.New("ApiVersions in an unsupported version")

// parseRequest decodes a frame's header and body; an error says what was
// wrong with it, as the sentence of a closing event.
func parseRequest(body []byte) (parsedRequest, error) {
	var pr parsedRequest
	if len(body) < 8 {
		return pr, fmt.Errorf("sent a request of %d bytes, shorter than any request header", len(body))
	}
	pr.key = int16(binary.BigEndian.Uint16(body[0:]))
	pr.version = int16(binary.BigEndian.Uint16(body[2:]))
	pr.corr = int32(binary.BigEndian.Uint32(body[4:]))
	client, rest, err := nullableString(body[8:])
	if err != nil {
		return pr, fmt.Errorf("sent a request header whose client id %v", err)
	}
	pr.client = client
	req := kmsg.RequestForKey(pr.key)
	a, served := apis[pr.key]
	if req == nil || !served {
		name := "unknown"
		if req != nil {
			name = kmsg.NameForKey(pr.key)
		}
		return pr, fmt.Errorf("asked for API key %d (%s), which mqlab does not serve", pr.key, name)
	}
	if pr.version < a.min || pr.version > a.max {
		if pr.key == apiVersionsKey {
			return pr, errUnsupportedVersions
		}
		return pr, fmt.Errorf("asked for %s version %d; mqlab serves versions %d to %d", kmsg.NameForKey(pr.key), pr.version, a.min, a.max)
	}
	req.SetVersion(pr.version)
	if req.IsFlexible() {
		if rest, err = skipTags(rest); err != nil {
			return pr, fmt.Errorf("sent a %s v%d header whose tagged fields %v", kmsg.NameForKey(pr.key), pr.version, err)
		}
	}
	if err := req.ReadFrom(rest); err != nil {
		return pr, fmt.Errorf("sent a %s v%d request that does not decode (%v)", kmsg.NameForKey(pr.key), pr.version, err)
	}
	pr.req = req
	return pr, nil
}

// frame encodes an answer with its size and response header.
func frame(corr int32, flexible bool, resp kmsg.Response) []byte {
	out := make([]byte, 8, 64)
	binary.BigEndian.PutUint32(out[4:], uint32(corr))
	if flexible {
		out = append(out, 0) // no tagged fields
	}
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out[0:], uint32(len(out)-4))
	return out
}

func nullableString(b []byte) (string, []byte, error) {
	if len(b) < 2 {
		return "", nil, errors.New("is cut short")
	}
	n := int16(binary.BigEndian.Uint16(b))
	b = b[2:]
	if n < 0 {
		return "", b, nil
	}
	if int(n) > len(b) {
		return "", nil, fmt.Errorf("says %d bytes, but only %d follow", n, len(b))
	}
	return string(b[:n]), b[n:], nil
}

func skipTags(b []byte) ([]byte, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, errors.New("are cut short")
	}
	b = b[n:]
	for range count {
		if _, n = binary.Uvarint(b); n <= 0 {
			return nil, errors.New("are cut short")
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || size > uint64(len(b)-n) {
			return nil, errors.New("are cut short")
		}
		b = b[n+int(size):]
	}
	return b, nil
}
