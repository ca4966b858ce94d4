package bench

// BenchmarkSQS: aws-sdk-go-v2 workers through the lab's SQS listener and
// through an echo of the protocol (see SQSLab and SQSEcho, which `mqlab
// bench` runs too). One op is one message sent, received and deleted, so
// -benchtime=Nx fixes the work, e.g.
//
//	go test -run '^$' -bench SQS -benchtime=20000x ./broker/bench/
//
// Eight workers each send a batch of 10 messages of 100 bytes, receive up
// to 10 and delete them in a batch, in turn. Reported: messages/s through
// the whole cycle and the median SendMessageBatch call.

import (
	"context"
	"testing"
	"time"
)

func BenchmarkSQS(b *testing.B) {
	for _, side := range []struct {
		name string
		run  func(context.Context, int) (SQSRate, error)
	}{{"lab", SQSLab}, {"echo", SQSEcho}} {
		b.Run(side.name, func(b *testing.B) {
			b.StopTimer()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			r, err := side.run(ctx, max(b.N, SQSBatch))
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
