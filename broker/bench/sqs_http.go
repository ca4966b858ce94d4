package bench

// sqsHTTP is the bench's own SQS client: the four actions its workers use,
// in SQS's JSON protocol over plain HTTP, retrying what SQS says may be
// retried. It keeps the mqlab binary free of an SDK; the Go benchmark
// runs the same workers on aws-sdk-go-v2 as well.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// sqsAttempts and sqsMaxBackoff bound the retries of a request the lab
// could not answer now (no leader during an election, a node busy).
const (
	sqsAttempts   = 20
	sqsMaxBackoff = 100 * time.Millisecond
)

type sqsHTTP struct {
	endpoint string
	hc       *http.Client
}

// NewSQSHTTP is a client of one SQS endpoint, such as a lab node's.
func NewSQSHTTP(endpoint string) SQSClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2 * SQSWorkers
	return &sqsHTTP{endpoint: endpoint, hc: &http.Client{Transport: tr}}
}

// sqsError is an error SQS answered with.
type sqsError struct {
	Status  int
	Type    string `json:"__type"`
	Message string `json:"message"`
}

func (e *sqsError) Error() string { return fmt.Sprintf("%s (%d): %s", e.Type, e.Status, e.Message) }

// call sends one action and decodes its answer into out, retrying server
// errors and connections refused with a short backoff.
func (c *sqsHTTP) call(ctx context.Context, action string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	backoff := 5 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err = c.once(ctx, action, body, out)
		var se *sqsError
		retry := err != nil && ctx.Err() == nil && (!errors.As(err, &se) || se.Status >= 500)
		if !retry || attempt == sqsAttempts {
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, sqsMaxBackoff)
	}
}

func (c *sqsHTTP) once(ctx context.Context, action string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	req.Header.Set("User-Agent", "mqlab-bench app/bench")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		se := &sqsError{Status: resp.StatusCode}
		if json.Unmarshal(data, se) != nil || se.Type == "" {
			se.Type, se.Message = "HTTP "+strconv.Itoa(resp.StatusCode), string(data)
		}
		return se
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// batchOutcome is the answer to a batch action: an entry that failed
// fails the call.
type batchOutcome struct {
	Failed []struct{ Id, Code, Message string }
}

func (b batchOutcome) err() error {
	if len(b.Failed) > 0 {
		return fmt.Errorf("%d entries failed: %s: %s", len(b.Failed), b.Failed[0].Code, b.Failed[0].Message)
	}
	return nil
}

func (c *sqsHTTP) CreateQueue(ctx context.Context, name string, attributes map[string]string) error {
	return c.call(ctx, "CreateQueue", map[string]any{"QueueName": name, "Attributes": attributes}, nil)
}

func (c *sqsHTTP) SendBatch(ctx context.Context, url string, bodies []string) error {
	type entry struct{ Id, MessageBody string }
	entries := make([]entry, len(bodies))
	for i, b := range bodies {
		entries[i] = entry{"m" + strconv.Itoa(i), b}
	}
	var out batchOutcome
	if err := c.call(ctx, "SendMessageBatch", map[string]any{"QueueUrl": url, "Entries": entries}, &out); err != nil {
		return err
	}
	return out.err()
}

func (c *sqsHTTP) Receive(ctx context.Context, url string, max int, wait time.Duration) ([]string, error) {
	var out struct {
		Messages []struct{ ReceiptHandle string }
	}
	in := map[string]any{"QueueUrl": url, "MaxNumberOfMessages": max, "WaitTimeSeconds": int(wait.Seconds())}
	if err := c.call(ctx, "ReceiveMessage", in, &out); err != nil {
		return nil, err
	}
	handles := make([]string, len(out.Messages))
	for i, m := range out.Messages {
		handles[i] = m.ReceiptHandle
	}
	return handles, nil
}

func (c *sqsHTTP) DeleteBatch(ctx context.Context, url string, handles []string) error {
	type entry struct{ Id, ReceiptHandle string }
	entries := make([]entry, len(handles))
	for i, h := range handles {
		entries[i] = entry{"d" + strconv.Itoa(i), h}
	}
	var out batchOutcome
	if err := c.call(ctx, "DeleteMessageBatch", map[string]any{"QueueUrl": url, "Entries": entries}, &out); err != nil {
		return err
	}
	return out.err()
}
