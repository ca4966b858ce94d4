package sqswire

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mqlab/mqlab/broker"
)

// The actions on messages: send, receive, delete, change visibility.

func (s *Server) dispatch(cl *call) (obj, error) {
	switch cl.action {
	case "CreateQueue":
		return s.createQueue(cl)
	case "GetQueueUrl":
		return s.getQueueURL(cl)
	case "ListQueues":
		return s.listQueues(cl)
	case "GetQueueAttributes":
		return s.getQueueAttributes(cl)
	case "SetQueueAttributes":
		return s.setQueueAttributes(cl)
	case "ListDeadLetterSourceQueues":
		return s.deadLetterSources(cl)
	case "StartMessageMoveTask":
		return s.startMessageMoveTask(cl)
	case "SendMessage":
		return s.send(cl, []entry{cl.in.entry}, false)
	case "SendMessageBatch":
		return s.send(cl, cl.in.Entries, true)
	case "ReceiveMessage":
		return s.receive(cl)
	case "DeleteMessage":
		return s.settle(cl, []entry{cl.in.entry}, false, false)
	case "DeleteMessageBatch":
		return s.settle(cl, cl.in.Entries, true, false)
	case "ChangeMessageVisibility":
		e := cl.in.entry
		e.VisibilityTimeout = cl.in.VisibilityTimeout
		return s.settle(cl, []entry{e}, false, true)
	case "ChangeMessageVisibilityBatch":
		return s.settle(cl, cl.in.Entries, true, true)
	case "PurgeQueue":
		return s.purge(cl)
	case "DeleteQueue":
		return s.deleteQueue(cl)
	case "TagQueue", "UntagQueue", "ListQueueTags", "AddPermission", "RemovePermission", "ListMessageMoveTasks", "CancelMessageMoveTask":
		return nil, errUnsupported("mqlab does not answer %s.", cl.action)
	}
	return nil, newErr(400, "UnknownOperationException", "InvalidAction", "The action %s is not valid for this endpoint.", cl.action)
}

var batchIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

// checkBatch checks a batch's entries: 1 to 10 of them, ids distinct.
func checkBatch(entries []entry) error {
	switch {
	case len(entries) == 0:
		return errEmptyBatch
	case len(entries) > 10:
		return errTooMany
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if !batchIDRE.MatchString(e.Id) {
			return errBatchID(e.Id)
		}
		if seen[e.Id] {
			return errNotDistinct
		}
		seen[e.Id] = true
	}
	return nil
}

// Where a message's SQS attributes travel among the lab message's own.
const (
	attrKey   = "sqs.attributes"
	senderKey = "sqs.sender"
)

// validBody reports whether a body holds only the characters SQS allows.
func validBody(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		switch {
		case r == 0x9 || r == 0xA || r == 0xD:
		case r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		default:
			return false
		}
	}
	return true
}

var attrNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,256}$`)

// checkMessage checks one message to send and returns its size.
func checkMessage(e entry, maxSize int) error {
	if e.MessageBody == nil || *e.MessageBody == "" {
		return errMissing("MessageBody")
	}
	if !validBody(*e.MessageBody) {
		return errInvalid("Invalid binary character in the message body: SQS takes #x9, #xA, #xD and #x20 to #x10FFFF except surrogates and #xFFFE, #xFFFF.")
	}
	size := len(*e.MessageBody)
	if len(e.MessageAttributes) > 10 {
		return errInvalid("Number of message attributes [%d] exceeds the allowed maximum [10].", len(e.MessageAttributes))
	}
	for name, a := range e.MessageAttributes {
		base, _, _ := strings.Cut(a.DataType, ".")
		switch {
		case !attrNameRE.MatchString(name) || strings.HasPrefix(strings.ToLower(name), "aws.") || strings.HasPrefix(strings.ToLower(name), "amazon."):
			return errInvalid("The message attribute name %q is not valid.", name)
		case base != "String" && base != "Number" && base != "Binary":
			return errInvalid("The message attribute %q has the data type %q; want String, Number or Binary.", name, a.DataType)
		case base == "Binary" && a.BinaryValue == nil:
			return errInvalid("The message attribute %q must carry a BinaryValue.", name)
		case base != "Binary" && (a.StringValue == nil || *a.StringValue == ""):
			return errInvalid("The message attribute %q must carry a non-empty StringValue.", name)
		}
		size += len(name) + len(a.DataType) + len(a.BinaryValue)
		if a.StringValue != nil {
			size += len(*a.StringValue)
		}
	}
	if size > maxSize {
		return errInvalid("One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", maxSize)
	}
	return nil
}

func (s *Server) send(cl *call, entries []entry, batch bool) (obj, error) {
	name, err := cl.queueName()
	if err != nil {
		return nil, err
	}
	if batch {
		if err := checkBatchSize(entries); err != nil {
			return nil, err
		}
	}
	in := s.sendRules(name)
	var failed, ok []any
	var msgs []broker.QueueMessage
	var sent []entry
	for _, e := range entries {
		msg, err := in.message(e)
		if err != nil {
			if !batch {
				return nil, err
			}
			failed = append(failed, failedEntry(e.Id, asAPI(err), true))
			continue
		}
		msg.Attributes[senderKey] = cl.client
		msg.MsgID = s.msgID(cl.client, cl.invocation, e.Id)
		msgs, sent = append(msgs, msg), append(sent, e)
	}
	if len(msgs) > 0 {
		qc, err := s.client(cl.node, cl.client)
		if err != nil {
			return nil, s.fault(cl, name, err)
		}
		for i, r := range qc.Send(cl.ctx, name, msgs...) {
			res, ferr := s.sent(cl, name, sent[i], r)
			switch {
			case ferr == nil && !batch:
				return res, nil
			case ferr == nil:
				ok = append(ok, append(obj{{"Id", sent[i].Id}}, res...))
			case !batch || errors.Is(ferr, errAborted) || errors.Is(ferr, errHold):
				return nil, ferr
			case len(ok) == 0 && asAPI(ferr).status == http.StatusServiceUnavailable:
				// The queue had no leader: nothing of the batch was
				// stored, so the whole request is retryable, and the
				// SDK retries it as it would not retry one entry.
				return nil, ferr
			default:
				ae := asAPI(ferr)
				failed = append(failed, failedEntry(sent[i].Id, ae, ae.sender()))
			}
		}
	}
	out := obj{{"Successful", list{"SendMessageBatchResultEntry", ok}}}
	if len(failed) > 0 {
		out = append(out, kv{"Failed", list{"BatchResultErrorEntry", failed}})
	}
	return out, nil
}

// failedEntry is a batch entry's failure as SQS answers it.
func failedEntry(id string, ae *apiError, senderFault bool) obj {
	return obj{{"Id", id}, {"SenderFault", senderFault}, {"Code", ae.query}, {"Message", ae.msg}}
}

// checkBatchSize refuses a SendMessageBatch whose bodies and attributes
// pass MaxMessageBytes in all, as SQS does.
func checkBatchSize(entries []entry) error {
	if err := checkBatch(entries); err != nil {
		return err
	}
	total := 0
	for _, e := range entries {
		if e.MessageBody != nil {
			total += len(*e.MessageBody)
		}
		for k, a := range e.MessageAttributes {
			total += len(k) + len(a.DataType) + len(a.BinaryValue)
			if a.StringValue != nil {
				total += len(*a.StringValue)
			}
		}
	}
	if total > MaxMessageBytes {
		return newErr(400, "BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong",
			"Batch requests cannot be longer than %d bytes; this one is %d.", MaxMessageBytes, total)
	}
	return nil
}

// sendRules are what a queue's attributes ask of a message sent to it.
type sendRules struct {
	queue        string
	maxSize      int
	delay        time.Duration
	contentDedup bool
}

func (s *Server) sendRules(name string) sendRules {
	extra := s.extras(name)
	in := sendRules{queue: name, maxSize: MaxMessageBytes, contentDedup: extra["ContentBasedDeduplication"] == "true"}
	if n, err := strconv.Atoi(extra["MaximumMessageSize"]); err == nil {
		in.maxSize = n
	}
	if n, err := strconv.Atoi(extra["DelaySeconds"]); err == nil {
		in.delay = time.Duration(n) * time.Second
	}
	return in
}

// message checks one entry against the queue's rules and makes the
// message to send, with its delay, group and deduplication id.
func (in sendRules) message(e entry) (broker.QueueMessage, error) {
	if err := checkMessage(e, in.maxSize); err != nil {
		return broker.QueueMessage{}, err
	}
	delay := in.delay
	if e.DelaySeconds != nil {
		if *e.DelaySeconds < 0 || *e.DelaySeconds > 900 {
			return broker.QueueMessage{}, errInvalid("Value %d for parameter DelaySeconds is invalid. Reason: must be between 0 and 900, if provided.", *e.DelaySeconds)
		}
		delay = time.Duration(*e.DelaySeconds) * time.Second
	}
	dedupe := e.MessageDeduplicationId
	switch {
	case !fifo(in.queue) && (e.MessageGroupId != "" || dedupe != ""):
		return broker.QueueMessage{}, errInvalid("The request includes a MessageGroupId or MessageDeduplicationId, which only FIFO queues take; %s is a standard queue.", in.queue)
	case !fifo(in.queue):
	case e.MessageGroupId == "":
		return broker.QueueMessage{}, errMissing("MessageGroupId")
	case e.DelaySeconds != nil && *e.DelaySeconds != 0:
		return broker.QueueMessage{}, errInvalid("Value %d for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.", *e.DelaySeconds)
	case len(e.MessageGroupId) > 128 || len(dedupe) > 128:
		return broker.QueueMessage{}, errInvalid("MessageGroupId and MessageDeduplicationId take up to 128 characters.")
	case dedupe == "" && in.contentDedup:
		sum := sha256.Sum256([]byte(*e.MessageBody))
		dedupe = hex.EncodeToString(sum[:])
	case dedupe == "":
		return broker.QueueMessage{}, errInvalid("The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
	}
	attrs := map[string]string{}
	if len(e.MessageAttributes) > 0 {
		b, _ := json.Marshal(e.MessageAttributes)
		attrs[attrKey] = string(b)
	}
	return broker.QueueMessage{Body: []byte(*e.MessageBody), Attributes: attrs, Delay: delay, Group: e.MessageGroupId, DedupeID: dedupe}, nil
}

// sent tells the observer what became of one sent message and makes its
// answer, or returns the error to answer with.
func (s *Server) sent(cl *call, name string, e entry, r broker.SendResult) (obj, error) {
	fate := Acked
	ferr := s.fault(cl, name, r.Err)
	switch {
	case r.Outcome == broker.OutcomeAcked:
	case errors.Is(ferr, errAborted):
		fate = Unknown
	default:
		fate = Refused
	}
	if s.cfg.Observer != nil && !errors.Is(ferr, errHold) {
		s.cfg.Observer.Sent(Sent{Client: cl.client, Queue: name, MsgID: r.MsgID, Fate: fate})
	}
	if fate != Acked {
		return nil, ferr
	}
	res := obj{{"MessageId", r.MsgID}, {"MD5OfMessageBody", md5Hex([]byte(*e.MessageBody))}}
	if sum := attributesMD5(e.MessageAttributes); sum != "" {
		res = append(res, kv{"MD5OfMessageAttributes", sum})
	}
	if fifo(name) {
		res = append(res, kv{"SequenceNumber", strconv.FormatUint(r.Seq, 10)})
	}
	if r.Duplicate {
		s.c.Report(broker.Event{Node: cl.node, Client: cl.client, MsgID: r.MsgID, Text: fmt.Sprintf(
			"SQS: %s's send to %s repeats a deduplication id of the last five minutes: dropped, answered with %s", cl.client, name, r.MsgID)})
	}
	return res, nil
}

// wanted reports whether an attribute name is asked for by names, which
// may hold All, .* or a prefix ending in .*.
func wanted(name string, names []string) bool {
	for _, n := range names {
		if n == "All" || n == ".*" || n == name {
			return true
		}
		if p, ok := strings.CutSuffix(n, ".*"); ok && strings.HasPrefix(name, p+".") {
			return true
		}
	}
	return false
}

var systemAttrs = map[string]bool{"All": true, "SenderId": true, "SentTimestamp": true, "ApproximateReceiveCount": true,
	"ApproximateFirstReceiveTimestamp": true, "SequenceNumber": true, "MessageDeduplicationId": true, "MessageGroupId": true,
	"AWSTraceHeader": true, "DeadLetterQueueSourceArn": true}

func (s *Server) receive(cl *call) (obj, error) {
	name, err := cl.queueName()
	if err != nil {
		return nil, err
	}
	in := cl.in
	max := 1
	if in.MaxNumberOfMessages != nil {
		if *in.MaxNumberOfMessages < 1 || *in.MaxNumberOfMessages > 10 {
			return nil, errInvalid("Value %d for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.", *in.MaxNumberOfMessages)
		}
		max = int(*in.MaxNumberOfMessages)
	}
	var vis time.Duration
	if in.VisibilityTimeout != nil {
		if *in.VisibilityTimeout < 0 || *in.VisibilityTimeout > 43200 {
			return nil, errInvalid("Value %d for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200, if provided.", *in.VisibilityTimeout)
		}
		vis = time.Duration(*in.VisibilityTimeout) * time.Second
		if vis == 0 {
			vis = time.Millisecond // the broker reads 0 as the queue's own
		}
	}
	var wait time.Duration
	if n, err := strconv.Atoi(s.extras(name)["ReceiveMessageWaitTimeSeconds"]); err == nil {
		wait = time.Duration(n) * time.Second
	}
	if in.WaitTimeSeconds != nil {
		if *in.WaitTimeSeconds < 0 || *in.WaitTimeSeconds > 20 {
			return nil, errInvalid("Value %d for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.", *in.WaitTimeSeconds)
		}
		wait = time.Duration(*in.WaitTimeSeconds) * time.Second
	}
	sysNames := append(append([]string(nil), in.AttributeNames...), in.MessageSystemAttributeNames...)
	for _, n := range sysNames {
		if !systemAttrs[n] {
			return nil, errAttrName(n)
		}
	}
	qc, err := s.client(cl.node, cl.client)
	if err != nil {
		return nil, s.fault(cl, name, err)
	}
	got, err := qc.Receive(cl.ctx, name, max, vis, wait)
	if err != nil {
		if errors.Is(err, broker.ErrInvalid) && len(got) == 0 {
			return nil, errInvalid("%v", err)
		}
		return nil, s.fault(cl, name, err)
	}
	var msgs []any
	for _, d := range got {
		if s.cfg.Observer != nil {
			s.cfg.Observer.Received(Received{Client: cl.client, Queue: name, MsgID: d.MsgID, ReceiveCount: d.ReceiveCount})
		}
		msgs = append(msgs, message(d, sysNames, in.MessageAttributeNames))
	}
	if len(msgs) == 0 {
		return obj{}, nil
	}
	return obj{{"Messages", list{"Message", msgs}}}, nil
}

// message is one received message as SQS answers it.
func message(d broker.Delivery, sysNames, attrNames []string) obj {
	m := obj{{"MessageId", d.MsgID}, {"ReceiptHandle", d.ReceiptHandle}, {"MD5OfBody", md5Hex(d.Body)}, {"Body", string(d.Body)}}
	sender := d.Attributes[senderKey]
	if sender == "" {
		sender, _, _ = strings.Cut(d.MsgID, "-") // a message the lab's own client sent
	}
	sys := map[string]any{
		"SenderId":                sender,
		"SentTimestamp":           strconv.FormatInt(d.SentAt.UnixMilli(), 10),
		"ApproximateReceiveCount": strconv.Itoa(d.ReceiveCount),
		// The queue keeps no time of a message's first receive: this
		// receive's time stands in, exact for the first.
		"ApproximateFirstReceiveTimestamp": strconv.FormatInt(d.ReceivedAt.UnixMilli(), 10),
	}
	if d.Source != "" {
		sys["DeadLetterQueueSourceArn"] = arn(d.Source)
	}
	if d.Group != "" {
		sys["MessageGroupId"] = d.Group
		sys["SequenceNumber"] = strconv.FormatUint(d.Seq, 10)
	}
	chosen := map[string]any{}
	for k, v := range sys {
		if wanted(k, sysNames) {
			chosen[k] = v
		}
	}
	if len(chosen) > 0 {
		m = append(m, kv{"Attributes", attrMap{"Attribute", chosen}})
	}
	var all map[string]msgAttr
	if raw := d.Attributes[attrKey]; raw != "" {
		json.Unmarshal([]byte(raw), &all)
	}
	picked := map[string]msgAttr{}
	shown := map[string]any{}
	for k, a := range all {
		if wanted(k, attrNames) {
			picked[k] = a
			v := obj{}
			if a.StringValue != nil {
				v = append(v, kv{"StringValue", *a.StringValue})
			}
			if a.BinaryValue != nil {
				v = append(v, kv{"BinaryValue", a.BinaryValue})
			}
			shown[k] = append(v, kv{"DataType", a.DataType})
		}
	}
	if len(picked) > 0 {
		m = append(m, kv{"MD5OfMessageAttributes", attributesMD5(picked)}, kv{"MessageAttributes", attrMap{"MessageAttribute", shown}})
	}
	return m
}

var receiptRE = regexp.MustCompile(`^m[1-9][0-9]{0,19}-r[1-9][0-9]{0,9}$`)

// settle deletes messages, or changes their visibility, by receipt handle.
func (s *Server) settle(cl *call, entries []entry, batch, visibility bool) (obj, error) {
	name, err := cl.queueName()
	if err != nil {
		return nil, err
	}
	if batch {
		if err := checkBatch(entries); err != nil {
			return nil, err
		}
	}
	qc, err := s.client(cl.node, cl.client)
	if err != nil {
		return nil, s.fault(cl, name, err)
	}
	errs := make([]error, len(entries))
	if visibility {
		for i, e := range entries {
			errs[i] = s.changeVisibility(cl, qc, name, e)
			if errors.Is(errs[i], errAborted) || errors.Is(errs[i], errHold) {
				return nil, errs[i]
			}
			if i == 0 && errs[i] != nil && asAPI(errs[i]).status == http.StatusServiceUnavailable {
				// The queue has no leader: nothing changed, and the
				// whole request is the SDK's to retry.
				return nil, errs[i]
			}
		}
	} else if err := s.delete(cl, qc, name, entries, errs); err != nil {
		return nil, err
	}
	if !batch {
		return nil, errs[0]
	}
	resultEntry := "DeleteMessageBatchResultEntry"
	if visibility {
		resultEntry = "ChangeMessageVisibilityBatchResultEntry"
	}
	var ok, failed []any
	for i, e := range entries {
		if errs[i] != nil {
			ae := asAPI(errs[i])
			failed = append(failed, obj{{"Id", e.Id}, {"SenderFault", ae.sender()}, {"Code", ae.query}, {"Message", ae.msg}})
			continue
		}
		ok = append(ok, obj{{"Id", e.Id}})
	}
	out := obj{{"Successful", list{resultEntry, ok}}}
	if len(failed) > 0 {
		out = append(out, kv{"Failed", list{"BatchResultErrorEntry", failed}})
	}
	return out, nil
}

func checkHandle(e entry) error {
	if e.ReceiptHandle == "" {
		return errMissing("ReceiptHandle")
	}
	if !receiptRE.MatchString(e.ReceiptHandle) {
		return errReceipt(e.ReceiptHandle)
	}
	return nil
}

// delete acks the entries' receipts in one request, with each entry's
// answer in errs; the error is the request's as a whole.
func (s *Server) delete(cl *call, qc *broker.QueueClient, name string, entries []entry, errs []error) error {
	var receipts []string
	var idx []int
	for i, e := range entries {
		if errs[i] = checkHandle(e); errs[i] == nil {
			receipts = append(receipts, e.ReceiptHandle)
			idx = append(idx, i)
		}
	}
	if len(receipts) == 0 {
		return nil
	}
	res, err := qc.AckBatch(cl.ctx, name, receipts)
	if err != nil {
		return s.fault(cl, name, err)
	}
	for k, i := range idx {
		err := res[k]
		if errors.Is(err, broker.ErrStaleReceipt) || errors.Is(err, broker.ErrUnknownReceipt) {
			// SQS answers a delete by an outdated handle with success; the
			// message stays where it is.
			s.c.Report(broker.Event{Node: cl.node, Client: cl.client, Text: fmt.Sprintf("SQS: %s's delete on %s did nothing: %v", cl.client, name, err)})
			err = nil
		}
		errs[i] = s.fault(cl, name, err)
	}
	return nil
}

func (s *Server) changeVisibility(cl *call, qc *broker.QueueClient, name string, e entry) error {
	if err := checkHandle(e); err != nil {
		return err
	}
	if e.VisibilityTimeout == nil {
		return errMissing("VisibilityTimeout")
	}
	if *e.VisibilityTimeout < 0 || *e.VisibilityTimeout > 43200 {
		return errInvalid("Value %d for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200.", *e.VisibilityTimeout)
	}
	err := qc.ChangeVisibility(cl.ctx, name, e.ReceiptHandle, time.Duration(*e.VisibilityTimeout)*time.Second)
	switch {
	case errors.Is(err, broker.ErrStaleReceipt):
		return errNotInflight("Message does not exist or is not available for visibility timeout change (%v).", err)
	case errors.Is(err, broker.ErrUnknownReceipt):
		return errReceipt(e.ReceiptHandle)
	}
	return s.fault(cl, name, err)
}
