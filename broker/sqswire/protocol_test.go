package sqswire

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker"
)

// post sends a raw request to node and returns the status and body.
func (l *lab) post(t *testing.T, node string, header map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", l.s.Endpoint(node)+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var form = map[string]string{"Content-Type": "application/x-www-form-urlencoded", "X-Mqlab-Client": "raw"}

// The query protocol as botocore speaks it: form-encoded actions with
// flattened lists, XML answers with flattened lists, and errors in SQS's
// ErrorResponse shape with its legacy codes.
func TestQueryProtocol(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	l := newLab(t, 3)
	v := url.Values{"Action": {"CreateQueue"}, "QueueName": {"receipts"}, "Attribute.1.Name": {"VisibilityTimeout"}, "Attribute.1.Value": {"7"}}
	code, body := l.post(t, "n3", form, v.Encode())
	if code != 200 || !strings.Contains(body, "<QueueUrl>http://"+l.s.Addr("n3")+"/000000000000/receipts</QueueUrl>") {
		t.Fatalf("create queue: %d %s", code, body)
	}
	qurl := l.s.QueueURL("n3", "receipts")
	v = url.Values{"Action": {"SendMessage"}, "QueueUrl": {qurl}, "MessageBody": {"receipt 881"},
		"MessageAttribute.1.Name": {"order"}, "MessageAttribute.1.Value.DataType": {"Number"}, "MessageAttribute.1.Value.StringValue": {"881"}}
	code, body = l.post(t, "n3", form, v.Encode())
	var sent struct {
		Result struct {
			MessageID string `xml:"MessageId"`
			MD5Body   string `xml:"MD5OfMessageBody"`
			MD5Attrs  string `xml:"MD5OfMessageAttributes"`
		} `xml:"SendMessageResult"`
	}
	if err := xml.Unmarshal([]byte(body), &sent); code != 200 || err != nil || sent.Result.MD5Body != md5Hex([]byte("receipt 881")) || sent.Result.MD5Attrs == "" {
		t.Fatalf("send: %d %s (%v)", code, body, err)
	}
	v = url.Values{"Action": {"ReceiveMessage"}, "QueueUrl": {qurl}, "AttributeName.1": {"All"}, "MessageAttributeName.1": {"All"}, "WaitTimeSeconds": {"1"}}
	code, body = l.post(t, "n3", form, v.Encode())
	var got struct {
		Messages []struct {
			ID      string `xml:"MessageId"`
			Receipt string `xml:"ReceiptHandle"`
			Body    string
			Attrs   []struct{ Name, Value string } `xml:"Attribute"`
			MAttrs  []struct {
				Name  string
				Value struct{ StringValue, DataType string }
			} `xml:"MessageAttribute"`
			MD5Attrs string `xml:"MD5OfMessageAttributes"`
		} `xml:"ReceiveMessageResult>Message"`
	}
	if err := xml.Unmarshal([]byte(body), &got); code != 200 || err != nil || len(got.Messages) != 1 {
		t.Fatalf("receive: %d %s (%v)", code, body, err)
	}
	m := got.Messages[0]
	if m.ID != sent.Result.MessageID || m.Body != "receipt 881" || len(m.MAttrs) != 1 || m.MAttrs[0].Value.StringValue != "881" || m.MD5Attrs != sent.Result.MD5Attrs {
		t.Fatalf("received %+v; want what was sent, with the same attribute MD5", m)
	}
	count := ""
	for _, a := range m.Attrs {
		if a.Name == "ApproximateReceiveCount" {
			count = a.Value
		}
	}
	if count != "1" {
		t.Errorf("ApproximateReceiveCount %q; want 1", count)
	}
	v = url.Values{"Action": {"DeleteMessageBatch"}, "QueueUrl": {qurl},
		"DeleteMessageBatchRequestEntry.1.Id": {"a"}, "DeleteMessageBatchRequestEntry.1.ReceiptHandle": {m.Receipt},
		"DeleteMessageBatchRequestEntry.2.Id": {"b"}, "DeleteMessageBatchRequestEntry.2.ReceiptHandle": {"forged"}}
	code, body = l.post(t, "n3", form, v.Encode())
	if code != 200 || !strings.Contains(body, "<DeleteMessageBatchResultEntry><Id>a</Id></DeleteMessageBatchResultEntry>") ||
		!strings.Contains(body, "<Code>ReceiptHandleIsInvalid</Code>") {
		t.Fatalf("delete batch: %d %s", code, body)
	}
	code, body = l.post(t, "n3", form, url.Values{"Action": {"GetQueueUrl"}, "QueueName": {"nowhere"}}.Encode())
	if code != 400 || !strings.Contains(body, "<Code>AWS.SimpleQueueService.NonExistentQueue</Code>") || !strings.Contains(body, "<Type>Sender</Type>") {
		t.Fatalf("a missing queue: %d %s", code, body)
	}
	code, body = l.post(t, "n1", form, url.Values{"Action": {"DeleteQueue"}, "QueueUrl": {qurl}}.Encode())
	if code != 200 || !strings.Contains(body, "<DeleteQueueResponse") {
		t.Fatalf("delete queue: %d %s", code, body)
	}
	code, body = l.post(t, "n3", form, url.Values{"Action": {"ReceiveMessage"}, "QueueUrl": {qurl}}.Encode())
	if code != 400 || !strings.Contains(body, "<Code>AWS.SimpleQueueService.NonExistentQueue</Code>") {
		t.Fatalf("receive from the deleted queue: %d %s", code, body)
	}
}

// Bad input gets a clear SQS error in the protocol it came in, and the
// node goes on answering.
func TestBadInput(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	l := newLab(t, 1)
	json := map[string]string{"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.CreateQueue"}
	cases := []struct {
		name   string
		header map[string]string
		body   string
		code   int
		want   string
	}{
		{"garbage JSON", json, `{"QueueName": `, 400, "SerializationException"},
		{"a number where a name goes", json, `{"QueueName": 7}`, 400, "SerializationException"},
		{"no target", map[string]string{"Content-Type": "application/x-amz-json-1.0"}, `{}`, 400, "UnknownOperationException"},
		{"unknown action", map[string]string{"X-Amz-Target": "AmazonSQS.Frobnicate"}, `{}`, 400, "UnknownOperationException"},
		{"unknown attribute", json, `{"QueueName":"q","Attributes":{"Colour":"blue"}}`, 400, "InvalidAttributeName"},
		{"bad visibility", json, `{"QueueName":"q","Attributes":{"VisibilityTimeout":"-1"}}`, 400, "InvalidAttributeValue"},
		{"bad queue name", json, `{"QueueName":"no spaces"}`, 400, "InvalidParameterValue"},
		{"no action", form, `QueueName=q`, 400, "MissingAction"},
		{"bad form", form, `Action=CreateQueue&QueueName=%zz`, 400, "MalformedQueryString"},
		{"a list without numbers", form, `Action=CreateQueue&QueueName=q&Attribute.x.Name=y`, 400, "InvalidParameterValue"},
		{"an index too large", form, `Action=CreateQueue&QueueName=q&Attribute.99999999999.Name=y`, 400, "InvalidParameterValue"},
		{"a value and a group", form, `Action=CreateQueue&QueueName=q&Attribute.1=a&Attribute.1.Name=b`, 400, "InvalidParameterValue"},
		{"no queue url", form, `Action=SendMessage&MessageBody=x`, 400, "MissingParameter"},
		{"too big a request", form, "Action=SendMessage&MessageBody=" + strings.Repeat("x", DefaultMaxRequestBytes+1), 400, "larger than"},
	}
	for _, c := range cases {
		code, body := l.post(t, "n1", c.header, c.body)
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s; want %d and %s", c.name, code, body, c.code, c.want)
		}
	}
	code, body := l.post(t, "n1", json, `{"QueueName":"q"}`)
	if code != 200 {
		t.Fatalf("after bad input, a good request: %d %s", code, body)
	}
	qurl := l.s.QueueURL("n1", "q")
	send := map[string]string{"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.SendMessage"}
	code, body = l.post(t, "n1", send, `{"QueueUrl":"`+qurl+`","MessageBody":"`+strings.Repeat("x", MaxMessageBytes+1)+`"}`)
	if code != 400 || !strings.Contains(body, "shorter than 262144 bytes") {
		t.Errorf("an oversize message: %d %s", code, body)
	}
	code, body = l.post(t, "n1", send, `{"QueueUrl":"`+qurl+`","MessageBody":"\u0000"}`)
	if code != 400 || !strings.Contains(body, "InvalidParameterValue") {
		t.Errorf("a NUL in the body: %d %s", code, body)
	}
	big := strings.Repeat("x", MaxMessageBytes/2)
	batch := map[string]string{"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.SendMessageBatch"}
	code, body = l.post(t, "n1", batch, `{"QueueUrl":"`+qurl+`","Entries":[{"Id":"a","MessageBody":"`+big+`"},{"Id":"b","MessageBody":"`+big+`x"}]}`)
	if code != 400 || !strings.Contains(body, "BatchRequestTooLong") {
		t.Errorf("a batch past 256 KiB: %d %.200s", code, body)
	}
	recv := map[string]string{"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.ReceiveMessage"}
	start := time.Now()
	code, body = l.post(t, "n1", recv, `{"QueueUrl":"`+qurl+`","WaitTimeSeconds":21}`)
	if code != 400 || !strings.Contains(body, "WaitTimeSeconds") || time.Since(start) > 5*time.Second {
		t.Errorf("a wait past 20 s: %d %s", code, body)
	}
}

// While a queue has no leader, a send, a delete or a visibility change
// answers ServiceUnavailable for the whole request, batch or not, so the
// SDK's retries carry the client until one is elected: no entry of a
// batch is answered as failed on its own (which an SDK does not retry).
func TestNoLeaderIsRetryable(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	l := newLab(t, 3)
	if err := l.c.CreateQueue(ctxFor(t, 20*time.Second), broker.QueueConfig{Name: "orders"}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n2", "n3"} {
		if err := l.c.Kill(n); err != nil {
			t.Fatal(err)
		}
	}
	qurl := l.s.QueueURL("n1", "orders")
	for _, tc := range []struct{ action, body string }{
		{"SendMessage", `{"QueueUrl":"` + qurl + `","MessageBody":"order 881"}`},
		{"SendMessageBatch", `{"QueueUrl":"` + qurl + `","Entries":[{"Id":"a","MessageBody":"order 881"},{"Id":"b","MessageBody":"order 882"}]}`},
		{"DeleteMessageBatch", `{"QueueUrl":"` + qurl + `","Entries":[{"Id":"a","ReceiptHandle":"m1-r1"}]}`},
		{"ChangeMessageVisibilityBatch", `{"QueueUrl":"` + qurl + `","Entries":[{"Id":"a","ReceiptHandle":"m1-r1","VisibilityTimeout":30}]}`},
	} {
		code, body := l.post(t, "n1", map[string]string{"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS." + tc.action}, tc.body)
		if code != 503 || !strings.Contains(body, "ServiceUnavailable") {
			t.Errorf("%s with no leader: %d %s; want 503 ServiceUnavailable", tc.action, code, body)
		}
	}
}
