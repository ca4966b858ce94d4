package bench

// BenchmarkSQS: workers through the lab's SQS listener and through an
// echo of the protocol (see SQSLab and SQSEcho), on aws-sdk-go-v2 and on
// the bench's own client, which `mqlab bench` uses. One op is one message
// sent, received and deleted, so -benchtime=Nx fixes the work, e.g.
//
//	go test -run '^$' -bench SQS -benchtime=20000x ./broker/bench/
//
// Eight workers each send a batch of 10 messages of 100 bytes, receive up
// to 10 and delete them in a batch, in turn. Reported: messages/s through
// the whole cycle and the median send call.

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

func BenchmarkSQS(b *testing.B) {
	for _, client := range []struct {
		name string
		new  func(string) SQSClient
	}{{"sdk", newSDKClient}, {"http", NewSQSHTTP}} {
		for _, side := range []struct {
			name string
			run  func(context.Context, int, func(string) SQSClient) (SQSRate, error)
		}{{"lab", SQSLab}, {"echo", SQSEcho}} {
			b.Run(client.name+"/"+side.name, func(b *testing.B) {
				b.StopTimer()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				r, err := side.run(ctx, max(b.N, SQSBatch), client.new)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.Rate.MsgsPerSec(), "msgs/s")
				b.ReportMetric(float64(r.SendP50.Microseconds())/1000, "send-p50-ms")
				b.ReportMetric(r.Rate.Cores(), "cores")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// The bench's own client and aws-sdk-go-v2 both take a short run through
// the lab and the echo: every message sent is received and deleted.
func TestSQSBenchClients(t *testing.T) {
	for _, c := range []struct {
		name string
		new  func(string) SQSClient
	}{{"sdk", newSDKClient}, {"http", NewSQSHTTP}} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if _, err := SQSLab(ctx, 200, c.new); err != nil {
			t.Errorf("%s through the lab: %v", c.name, err)
		}
		if _, err := SQSEcho(ctx, 200, c.new); err != nil {
			t.Errorf("%s through the echo: %v", c.name, err)
		}
		cancel()
	}
}

// sdkClient is an aws-sdk-go-v2 client of one endpoint with SQS's own
// defaults, except that it retries more often and without a rate limit:
// on a busy machine the fast timing's elections come now and then, and
// the ServiceUnavailable a client hears meanwhile is brief.
type sdkClient struct{ cl *sqs.Client }

func newSDKClient(endpoint string) SQSClient {
	return sdkClient{sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("mqlab", "mqlab", ""),
		AppID:        "bench",
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = sqsAttempts
			o.MaxBackoff = sqsMaxBackoff
			o.RateLimiter = ratelimit.None
		}),
	})}
}

func (c sdkClient) CreateQueue(ctx context.Context, name string, attributes map[string]string) error {
	_, err := c.cl.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attributes})
	return err
}

func (c sdkClient) SendBatch(ctx context.Context, url string, bodies []string) error {
	entries := make([]types.SendMessageBatchRequestEntry, len(bodies))
	for i, b := range bodies {
		entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String("m" + strconv.Itoa(i)), MessageBody: aws.String(b)}
	}
	out, err := c.cl.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: entries})
	if err == nil && len(out.Failed) > 0 {
		err = fmt.Errorf("%d entries failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Message))
	}
	return err
}

func (c sdkClient) Receive(ctx context.Context, url string, max int, wait time.Duration) ([]string, error) {
	got, err := c.cl.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: int32(max), WaitTimeSeconds: int32(wait.Seconds())})
	if err != nil {
		return nil, err
	}
	handles := make([]string, len(got.Messages))
	for i, m := range got.Messages {
		handles[i] = aws.ToString(m.ReceiptHandle)
	}
	return handles, nil
}

func (c sdkClient) DeleteBatch(ctx context.Context, url string, handles []string) error {
	entries := make([]types.DeleteMessageBatchRequestEntry, len(handles))
	for i, h := range handles {
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String("d" + strconv.Itoa(i)), ReceiptHandle: aws.String(h)}
	}
	out, err := c.cl.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: entries})
	if err == nil && len(out.Failed) > 0 {
		err = fmt.Errorf("%d entries failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Message))
	}
	return err
}
