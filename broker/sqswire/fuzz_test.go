package sqswire

import (
	"bytes"
	"net/url"
	"testing"
)

// FuzzDecode feeds both protocols' decoders, and the checks that follow
// them, whatever bytes come: each answers a request or an SQS error, and
// none panics.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"QueueName":"q","Attributes":{"VisibilityTimeout":"5","RedrivePolicy":"{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:0:d\",\"maxReceiveCount\":3}"}}`))
	f.Add([]byte(`{"QueueUrl":"http://h/000000000000/q","Entries":[{"Id":"a","MessageBody":"x","DelaySeconds":3,"MessageAttributes":{"k":{"DataType":"Binary","BinaryValue":"AAE="}}}]}`))
	f.Add([]byte(`Action=SendMessageBatch&QueueUrl=u&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=x&SendMessageBatchRequestEntry.1.MessageAttribute.1.Name=n&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType=String&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue=v`))
	f.Add([]byte(`Action=CreateQueue&QueueName=q&Attribute.1.Name=DelaySeconds&Attribute.1.Value=5&Attribute.2=x`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var inputs []*input
		if in, err := decodeJSON(body); err == nil {
			inputs = append(inputs, in)
		} else if asAPI(err).status != 400 {
			t.Fatalf("JSON decode error %v is not a client error", err)
		}
		if form, err := url.ParseQuery(string(body)); err == nil {
			if in, err := decodeQuery(form); err == nil {
				inputs = append(inputs, in)
			} else if asAPI(err).status != 400 {
				t.Fatalf("query decode error %v is not a client error", err)
			}
		}
		for _, in := range inputs {
			queueConfig("q", in.Attributes)
			checkBatch(in.Entries)
			for _, e := range append(in.Entries, in.entry) {
				checkMessage(e, MaxMessageBytes)
				attributesMD5(e.MessageAttributes)
			}
			var buf bytes.Buffer
			out := obj{{"Attributes", attrMap{"Attribute", map[string]any{"a": in.QueueName}}}, {"Names", list{"Name", []any{in.QueueUrl, in.ReceiptHandle}}}}
			writeJSON(&buf, out)
			writeXML(&buf, "Result", out)
		}
	})
}
