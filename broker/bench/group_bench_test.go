package bench

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkConsume measures consuming from a 3-node cluster with RF 3: a
// group reads b.N records of 100 bytes from a 3-partition topic, polling
// 100 records at a time and committing after every poll (a commit every
// 100 records, each an acks=all write to __consumer_offsets). The records
// are produced before the timer starts (see Consume, which `mqlab
// bench` runs too).
func BenchmarkConsume(b *testing.B) {
	for _, consumers := range []int{1, 3} {
		b.Run(fmt.Sprintf("consumers=%d", consumers), func(b *testing.B) {
			b.StopTimer()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			res, err := Consume(ctx, 3, consumers, b.N)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(res.Rate.MsgsPerSec(), "records/s")
			b.ReportMetric(res.Rate.MBPerSec(), "MB/s")
			b.ReportMetric(float64(res.Commits), "commits")
			b.ReportMetric(float64(res.Rate.Elapsed.Nanoseconds())/float64(b.N), "ns/op")
		})
	}
}
