package sqswire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker"
)

// The actions on queues themselves: create, find, list, attributes.

var queueNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,75}(\.fifo|[A-Za-z0-9_-]{0,5})$`)

// fifo says whether a queue is a FIFO queue: SQS names every one NAME.fifo.
func fifo(name string) bool { return strings.HasSuffix(name, ".fifo") }

// defaultVisibility is SQS's, for queues an SQS client creates without
// one (the lab's own queue create has its own default).
const defaultVisibility = 30 * time.Second

// maxRetention is SQS's longest retention, reported for a lab queue
// whose messages live until acked.
const maxRetention = 14 * 24 * time.Hour

// kept are the attributes the listener keeps for a queue; the broker's
// queue holds the rest (visibility, retention, redrive policy).
var kept = map[string]bool{
	"DelaySeconds": true, "MaximumMessageSize": true, "ReceiveMessageWaitTimeSeconds": true,
	"Policy": true, "KmsMasterKeyId": true, "KmsDataKeyReusePeriodSeconds": true, "SqsManagedSseEnabled": true,
	"RedriveAllowPolicy": true, "ContentBasedDeduplication": true, "DeduplicationScope": true, "FifoThroughputLimit": true,
}

// brokerAttrs are held by the broker's queue and fixed at creation.
var brokerAttrs = map[string]bool{"VisibilityTimeout": true, "MessageRetentionPeriod": true, "RedrivePolicy": true}

// readOnly are answered by GetQueueAttributes and never set.
var readOnly = []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed",
	"CreatedTimestamp", "LastModifiedTimestamp", "QueueArn"}

func arn(name string) string { return "arn:aws:sqs:us-east-1:" + Account + ":" + name }

func (cl *call) url(name string) string { return "http://" + cl.host + "/" + Account + "/" + name }

// queueName is the queue a request is about: its QueueUrl's last part, or
// the path it was posted to.
func (cl *call) queueName() (string, error) {
	u := cl.in.QueueUrl
	if u == "" && strings.Count(cl.path, "/") == 2 {
		u = cl.path
	}
	if u == "" {
		return "", errMissing("QueueUrl")
	}
	name := u[strings.LastIndex(u, "/")+1:]
	if name == "" {
		return "", newErr(400, "InvalidAddress", "InvalidAddress", "The address %q is not a queue URL: it should end in /%s/NAME.", u, Account)
	}
	return name, nil
}

// seconds reads a whole number of seconds between lo and hi.
func seconds(name, v string, lo, hi int64) (time.Duration, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, errAttrValue("Invalid value for the parameter %s: %q; want a whole number from %d to %d.", name, v, lo, hi)
	}
	return time.Duration(n) * time.Second, nil
}

// redrivePolicy is SQS's RedrivePolicy attribute; maxReceiveCount comes
// as a number or a string.
type redrivePolicy struct {
	DeadLetterTargetArn string          `json:"deadLetterTargetArn"`
	MaxReceiveCount     json.RawMessage `json:"maxReceiveCount"`
}

// queueConfig reads CreateQueue's attributes: the broker's part and the
// part the listener keeps.
func queueConfig(name string, attrs map[string]string) (broker.QueueConfig, map[string]string, error) {
	cfg := broker.QueueConfig{Name: name, Visibility: defaultVisibility}
	extra := map[string]string{}
	for k, v := range attrs {
		var err error
		switch k {
		case "VisibilityTimeout":
			cfg.Visibility, err = seconds(k, v, 0, 43200)
			if cfg.Visibility == 0 {
				cfg.Visibility = time.Millisecond // the broker reads 0 as its default
			}
		case "MessageRetentionPeriod":
			cfg.TTL, err = seconds(k, v, 60, 1209600)
		case "DelaySeconds":
			_, err = seconds(k, v, 0, 900)
		case "ReceiveMessageWaitTimeSeconds":
			_, err = seconds(k, v, 0, 20)
		case "MaximumMessageSize":
			_, err = strconv.Atoi(v)
			if n, _ := strconv.Atoi(v); err != nil || n < 1024 || n > MaxMessageBytes {
				err = errAttrValue("Invalid value for the parameter MaximumMessageSize: %q; want 1024 to %d bytes.", v, MaxMessageBytes)
			}
		case "RedrivePolicy":
			cfg.DLQ, cfg.MaxReceives, err = parseRedrive(v)
		case "FifoQueue":
			if v != "true" && v != "false" {
				err = errAttrValue("Invalid value for the parameter FifoQueue: %q; want true or false.", v)
			}
			cfg.FIFO = v == "true"
		case "ContentBasedDeduplication":
			if v != "true" && v != "false" {
				err = errAttrValue("Invalid value for the parameter ContentBasedDeduplication: %q; want true or false.", v)
			} else if v == "true" && !fifo(name) {
				err = errInvalid("Unknown Attribute ContentBasedDeduplication: only FIFO queues take it.")
			}
		case "DeduplicationScope", "FifoThroughputLimit":
			if !fifo(name) {
				err = errInvalid("Unknown Attribute %s: only FIFO queues take it.", k)
			}
		default:
			if !kept[k] {
				err = errAttrName(k)
			}
		}
		if err != nil {
			return cfg, nil, err
		}
		if kept[k] {
			extra[k] = v
		}
	}
	if cfg.FIFO != fifo(name) {
		return cfg, nil, errInvalid("The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix, and FifoQueue=true must be set: %q.", name)
	}
	return cfg, extra, nil
}

func parseRedrive(v string) (string, int, error) {
	var p redrivePolicy
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return "", 0, errAttrValue("Invalid value for the parameter RedrivePolicy: it is not JSON (%v).", err)
	}
	dlq := p.DeadLetterTargetArn[strings.LastIndex(p.DeadLetterTargetArn, ":")+1:]
	if dlq == "" {
		return "", 0, errAttrValue("Invalid value for the parameter RedrivePolicy: deadLetterTargetArn names no queue.")
	}
	n, err := strconv.Atoi(strings.Trim(string(p.MaxReceiveCount), `"`))
	if err != nil || n < 1 || n > 1000 {
		return "", 0, errAttrValue("Invalid value for the parameter RedrivePolicy: maxReceiveCount %s; want 1 to 1000.", p.MaxReceiveCount)
	}
	return dlq, n, nil
}

// queueState is the queue as the cluster has it now.
func (s *Server) queueState(name string) (broker.QueueState, bool) {
	for _, q := range s.c.SnapshotWindow(0).Queues {
		if q.Config.Name == name {
			return q, true
		}
	}
	return broker.QueueState{}, false
}

func (s *Server) extras(name string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for k, v := range s.extra[name] {
		out[k] = v
	}
	return out
}

func (s *Server) createQueue(cl *call) (obj, error) {
	name := cl.in.QueueName
	if name == "" {
		return nil, errMissing("QueueName")
	}
	if !queueNameRE.MatchString(name) {
		return nil, errInvalid("Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length: %q.", name)
	}
	cfg, extra, err := queueConfig(name, cl.in.Attributes)
	if err != nil {
		return nil, err
	}
	if q, ok := s.queueState(name); ok {
		// As SQS: creating a queue again is fine unless an attribute given
		// differs from the queue's.
		for k := range cl.in.Attributes {
			differs := false
			switch k {
			case "VisibilityTimeout":
				differs = cfg.Visibility != q.Config.Visibility
			case "MessageRetentionPeriod":
				differs = cfg.TTL != q.Config.TTL
			case "RedrivePolicy":
				differs = cfg.DLQ != q.Config.DLQ || cfg.MaxReceives != q.Config.MaxReceives
			case "FifoQueue":
				differs = cfg.FIFO != q.Config.FIFO
			}
			if differs {
				return nil, newErr(400, "QueueNameExists", "QueueAlreadyExists", "A queue already exists with the same name and a different value for attribute %s.", k)
			}
		}
	} else {
		err := s.c.CreateQueue(cl.ctx, cfg)
		if err != nil && !errors.Is(err, broker.ErrQueueExists) {
			return nil, s.fault(cl, name, err)
		}
		s.mu.Lock()
		s.extra[name] = extra
		s.mu.Unlock()
	}
	return obj{{"QueueUrl", cl.url(name)}}, nil
}

func (s *Server) getQueueURL(cl *call) (obj, error) {
	name := cl.in.QueueName
	if name == "" {
		return nil, errMissing("QueueName")
	}
	if _, ok := s.queueState(name); !ok {
		return nil, errNoQueue(name)
	}
	return obj{{"QueueUrl", cl.url(name)}}, nil
}

func (s *Server) listQueues(cl *call) (obj, error) {
	limit := 1000
	if cl.in.MaxResults != nil {
		if *cl.in.MaxResults < 1 || *cl.in.MaxResults > 1000 {
			return nil, errInvalid("MaxResults %d: want 1 to 1000.", *cl.in.MaxResults)
		}
		limit = int(*cl.in.MaxResults)
	}
	var urls []any
	for _, q := range s.c.SnapshotWindow(0).Queues {
		if strings.HasPrefix(q.Config.Name, cl.in.QueueNamePrefix) && len(urls) < limit {
			urls = append(urls, cl.url(q.Config.Name))
		}
	}
	if len(urls) == 0 {
		return obj{}, nil
	}
	return obj{{"QueueUrls", list{"QueueUrl", urls}}}, nil
}

func (s *Server) deadLetterSources(cl *call) (obj, error) {
	name, err := cl.queueName()
	if err != nil {
		return nil, err
	}
	qs := s.c.SnapshotWindow(0).Queues
	found := false
	var urls []any
	for _, q := range qs {
		found = found || q.Config.Name == name
		if q.Config.DLQ == name {
			urls = append(urls, cl.url(q.Config.Name))
		}
	}
	if !found {
		return nil, errNoQueue(name)
	}
	return obj{{"queueUrls", list{"QueueUrl", urls}}}, nil
}

// attributes are every attribute of a queue, as GetQueueAttributes
// answers them.
func (s *Server) attributes(q broker.QueueState) map[string]any {
	c := q.Config
	m := map[string]any{
		"ApproximateNumberOfMessages":           strconv.Itoa(q.Counts.Ready),
		"ApproximateNumberOfMessagesNotVisible": strconv.Itoa(q.Counts.InFlight),
		"ApproximateNumberOfMessagesDelayed":    strconv.Itoa(q.Counts.Delayed),
		"QueueArn":                              arn(c.Name),
		"VisibilityTimeout":                     strconv.Itoa(int(c.Visibility / time.Second)),
		"MessageRetentionPeriod":                strconv.Itoa(int(maxRetention / time.Second)),
		"DelaySeconds":                          "0",
		"MaximumMessageSize":                    strconv.Itoa(MaxMessageBytes),
		"ReceiveMessageWaitTimeSeconds":         "0",
		"CreatedTimestamp":                      "0",
		"LastModifiedTimestamp":                 "0",
		"SqsManagedSseEnabled":                  "false",
	}
	if c.FIFO {
		m["FifoQueue"] = "true"
		m["ContentBasedDeduplication"] = "false"
	}
	if c.TTL > 0 {
		m["MessageRetentionPeriod"] = strconv.Itoa(int(c.TTL / time.Second))
	}
	if c.DLQ != "" && c.MaxReceives > 0 {
		m["RedrivePolicy"] = fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, arn(c.DLQ), c.MaxReceives)
	}
	for k, v := range s.extras(c.Name) {
		m[k] = v
	}
	return m
}

func (s *Server) getQueueAttributes(cl *call) (obj, error) {
	name, err := cl.queueName()
	if err != nil {
		return nil, err
	}
	q, ok := s.queueState(name)
	if !ok {
		return nil, errNoQueue(name)
	}
	all := s.attributes(q)
	out := map[string]any{}
	for _, want := range cl.in.AttributeNames {
		if want == "All" {
			out = all
			break
		}
		v, ok := all[want]
		if !ok {
			if kept[want] || brokerAttrs[want] || want == "FifoQueue" {
				continue // not set on this queue
			}
			return nil, errAttrName(want)
		}
		out[want] = v
	}
	if len(out) == 0 {
		return obj{}, nil
	}
	return obj{{"Attributes", attrMap{"Attribute", out}}}, nil
}

func (s *Server) setQueueAttributes(cl *call) (obj, error) {
	name, err := cl.queueName()
	if err != nil {
		return nil, err
	}
	q, ok := s.queueState(name)
	if !ok {
		return nil, errNoQueue(name)
	}
	cfg, extra, err := queueConfig(name, cl.in.Attributes)
	if err != nil {
		return nil, err
	}
	for k := range cl.in.Attributes {
		if !brokerAttrs[k] {
			continue
		}
		same := true
		switch k {
		case "VisibilityTimeout":
			same = cfg.Visibility == q.Config.Visibility
		case "MessageRetentionPeriod":
			same = cfg.TTL == q.Config.TTL
		case "RedrivePolicy":
			same = cfg.DLQ == q.Config.DLQ && cfg.MaxReceives == q.Config.MaxReceives
		}
		if !same {
			return nil, errAttrValue("mqlab's queues keep the %s they were created with; create another queue to change it.", k)
		}
	}
	s.mu.Lock()
	if s.extra[name] == nil {
		s.extra[name] = map[string]string{}
	}
	for k, v := range extra {
		s.extra[name][k] = v
	}
	s.mu.Unlock()
	return nil, nil
}

func (s *Server) startMessageMoveTask(cl *call) (obj, error) {
	if cl.in.SourceArn == "" {
		return nil, errMissing("SourceArn")
	}
	dlq := cl.in.SourceArn[strings.LastIndex(cl.in.SourceArn, ":")+1:]
	to := ""
	if cl.in.DestinationArn != "" {
		to = cl.in.DestinationArn[strings.LastIndex(cl.in.DestinationArn, ":")+1:]
	}
	if _, ok := s.queueState(dlq); !ok {
		return nil, newErr(400, "ResourceNotFoundException", "ResourceNotFoundException", "The resource that you specified for the SourceArn parameter does not exist: %s.", cl.in.SourceArn)
	}
	if _, err := s.c.Redrive(cl.ctx, dlq, to); err != nil {
		return nil, s.fault(cl, dlq, err)
	}
	return obj{{"TaskHandle", requestID()}}, nil
}

func (s *Server) purge(cl *call) (obj, error) {
	name, err := cl.queueName()
	if err != nil {
		return nil, err
	}
	qc, err := s.client(cl.node, cl.client)
	if err != nil {
		return nil, s.fault(cl, name, err)
	}
	if _, err := qc.Purge(cl.ctx, name); err != nil {
		return nil, s.fault(cl, name, err)
	}
	return nil, nil
}

// adminWait bounds how long a queue's creation or deletion waits for the
// cluster (a leader to elect, the controller to agree) before the client
// is told to try again.
const adminWait = 10 * time.Second

func (s *Server) deleteQueue(cl *call) (obj, error) {
	name, err := cl.queueName()
	if err != nil {
		return nil, err
	}
	if _, ok := s.queueState(name); !ok {
		return nil, errNoQueue(name)
	}
	ctx, cancel := context.WithTimeout(cl.ctx, adminWait)
	defer cancel()
	if _, err := s.c.DeleteQueue(ctx, name, cl.client); err != nil {
		// A refusal (another queue sends its failures here) answers
		// InvalidParameterValue; no leader, ServiceUnavailable.
		return nil, s.fault(cl, name, err)
	}
	s.mu.Lock()
	delete(s.extra, name)
	s.mu.Unlock()
	return nil, nil
}
