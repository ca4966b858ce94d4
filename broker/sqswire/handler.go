package sqswire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// call is one request, decoded.
type call struct {
	ctx        context.Context
	node       string
	client     string
	action     string
	invocation string // amz-sdk-invocation-id: the same on every retry of one call
	host       string // the host the client addressed, for the queue URLs it is given
	path       string
	in         *input
}

// errHold: the node is cut off; the request waits as bytes wait behind a
// cut cable, and runs once the link heals (nothing of it ran yet).
var errHold = errors.New("the node is cut off and does not answer")

func (s *Server) handler(node string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			panic(http.ErrAbortHandler)
		}
		s.handlers.Add(1)
		s.mu.Unlock()
		defer s.handlers.Done()
		defer func() {
			p := recover()
			if p == nil || p == http.ErrAbortHandler { //nolint:errorlint // the sentinel itself is what net/http panics with
				if p != nil {
					panic(p)
				}
				return
			}
			// A bug, not the client's doing: say so in the timeline and
			// answer as SQS answers its own failures.
			s.c.Report(broker.Event{Node: node, Text: fmt.Sprintf("SQS: %s could not handle a request (%v); it answered InternalError", node, p)})
			w.Header().Set("Content-Type", "text/xml")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`<?xml version="1.0"?><ErrorResponse><Error><Type>Receiver</Type><Code>InternalError</Code><Message>the node could not handle the request</Message></Error></ErrorResponse>`))
		}()
		s.serve(node, w, r)
	})
}

func (s *Server) serve(node string, w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	jsonProto := target != "" || strings.Contains(r.Header.Get("Content-Type"), "json")
	cl := &call{ctx: r.Context(), node: node, client: clientName(r.Header), invocation: r.Header.Get("Amz-Sdk-Invocation-Id"),
		host: r.Host, path: r.URL.Path}
	if cl.host == "" {
		cl.host = s.Addr(node)
	}
	out, err := s.decode(cl, r, target, jsonProto)
	if s.cfg.Observer != nil {
		s.cfg.Observer.Asked(Asked{Client: cl.client, Action: cl.action})
	}
	if err == nil {
		out, err = s.run(cl)
	}
	if errors.Is(err, errAborted) {
		panic(http.ErrAbortHandler) // the connection closes with no answer
	}
	reqID := requestID()
	var buf bytes.Buffer
	if err != nil {
		ae := asAPI(err)
		s.reportError(cl, ae)
		if jsonProto {
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.Header().Set("X-Amzn-Requestid", reqID)
			kind := "Sender"
			if !ae.sender() {
				kind = "Receiver"
			}
			w.Header().Set("X-Amzn-Query-Error", ae.query+";"+kind)
			writeJSON(&buf, obj{{"__type", "com.amazonaws.sqs#" + ae.json}, {"message", ae.msg}})
		} else {
			w.Header().Set("Content-Type", "text/xml")
			kind := "Sender"
			if !ae.sender() {
				kind = "Receiver"
			}
			buf.WriteString(`<?xml version="1.0"?><ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/">`)
			writeXML(&buf, "Error", obj{{"Type", kind}, {"Code", ae.query}, {"Message", ae.msg}, {"Detail", ""}})
			writeXML(&buf, "RequestId", reqID)
			buf.WriteString("</ErrorResponse>")
		}
		w.WriteHeader(ae.status)
		w.Write(buf.Bytes())
		return
	}
	if jsonProto {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amzn-Requestid", reqID)
		if out == nil {
			out = obj{}
		}
		writeJSON(&buf, out)
	} else {
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprintf(&buf, `<?xml version="1.0"?><%sResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/">`, cl.action)
		if out != nil {
			writeXML(&buf, cl.action+"Result", out)
		}
		writeXML(&buf, "ResponseMetadata", obj{{"RequestId", reqID}})
		fmt.Fprintf(&buf, "</%sResponse>", cl.action)
	}
	w.Write(buf.Bytes())
}

// decode reads the request's action and parameters in whichever protocol
// it came.
func (s *Server) decode(cl *call, r *http.Request, target string, jsonProto bool) (obj, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.cfg.MaxRequestBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, errInvalid("The request is larger than %d bytes, the most a node takes.", s.cfg.MaxRequestBytes)
		}
		return nil, errAborted
	}
	if jsonProto {
		action, ok := strings.CutPrefix(target, "AmazonSQS.")
		if !ok || action == "" {
			return nil, newErr(400, "UnknownOperationException", "InvalidAction",
				"The X-Amz-Target header must name an action as AmazonSQS.ACTION, not %q.", target)
		}
		cl.action = action
		cl.in, err = decodeJSON(body)
		return nil, err
	}
	form := r.URL.Query()
	if len(body) > 0 {
		posted, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, newErr(400, "InvalidParameterValue", "MalformedQueryString", "The request body is not form-encoded parameters: %v", err)
		}
		for k, v := range posted {
			form[k] = append(form[k], v...)
		}
	}
	cl.action = form.Get("Action")
	if cl.action == "" {
		return nil, newErr(400, "UnknownOperationException", "MissingAction",
			"The request names no action: send Action=… (the query protocol) or an X-Amz-Target header (the JSON protocol).")
	}
	cl.in, err = decodeQuery(form)
	return nil, err
}

// run runs the call, holding it while the node is cut off.
func (s *Server) run(cl *call) (obj, error) {
	held := false
	defer func() {
		if held {
			s.holding.Add(-1)
		}
	}()
	for {
		out, err := s.dispatch(cl)
		if !errors.Is(err, errHold) {
			return out, err
		}
		if !held {
			held = true
			s.holding.Add(1)
		}
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-cl.ctx.Done():
			t.Stop()
			return nil, errAborted
		case <-t.C:
		}
	}
}

// fault turns what the broker answered into the client's fate: a lost
// request or reply, or a killed node, loses the answer; a cut-off node
// holds it; the rest are SQS errors.
func (s *Server) fault(cl *call, name string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raftnet.ErrReplyLost), errors.Is(err, raftnet.ErrRequestLost), errors.Is(err, broker.ErrUnknownOutcome):
		return errAborted
	case errors.Is(err, raftnet.ErrUnreachable):
		if s.c.NodeUp(cl.node) {
			return errHold
		}
		return errAborted
	case cl.ctx.Err() != nil:
		return errAborted
	case errors.Is(err, broker.ErrUnknownQueue):
		return errNoQueue(name)
	case errors.Is(err, broker.ErrNoLeader), errors.Is(err, broker.ErrNotLeader), errors.Is(err, broker.ErrNodeDown),
		errors.Is(err, broker.ErrClosed), errors.Is(err, context.DeadlineExceeded):
		return errUnavailable("Queue %s cannot be reached now (%v); try again.", name, err)
	case errors.Is(err, broker.ErrQueueFull):
		return newErr(403, "OverLimit", "OverLimit", "%v", err)
	case errors.Is(err, broker.ErrInvalid):
		return errInvalid("%v", err)
	}
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return newErr(500, "InternalError", "InternalError", "%v", err)
}

// reportError puts an error answer in the timeline, once a second per
// client, action and code, so a client retrying through a failover does
// not fill it.
func (s *Server) reportError(cl *call, ae *apiError) {
	key := cl.client + "|" + cl.action + "|" + ae.query
	now := time.Now()
	s.mu.Lock()
	if s.said == nil {
		s.said = map[string]time.Time{}
	}
	last, seen := s.said[key]
	if seen && now.Sub(last) < time.Second {
		s.mu.Unlock()
		return
	}
	s.said[key] = now
	if len(s.said) > 4096 {
		clear(s.said)
	}
	s.mu.Unlock()
	action := cl.action
	if action == "" {
		action = "a request"
	}
	s.c.Report(broker.Event{Node: cl.node, Client: cl.client, Text: fmt.Sprintf("SQS: %s's %s on %s answered %s: %s", cl.client, action, cl.node, ae.query, ae.msg)})
}
