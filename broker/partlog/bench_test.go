package partlog

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// BenchmarkAppend appends batches of 100 records with 100-byte values, as
// the FSM would after decoding them. The log is replaced every 10,000
// batches (outside the timer) so long runs do not measure memory growth.
func BenchmarkAppend(b *testing.B) {
	batch := Batch{Records: recs("bench", 100, 100, 1_700_000_000e9)}
	l := newLog(b, Config{})
	b.ReportAllocs()
	b.SetBytes(100 * 100)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%10_000 == 0 && i > 0 {
			b.StopTimer()
			l = newLog(b, Config{})
			runtime.GC()
			b.StartTimer()
		}
		if _, err := l.Append(batch, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/record")
}

// BenchmarkDecodeAppend is the whole FSM apply path for one 100-record batch.
func BenchmarkDecodeAppend(b *testing.B) {
	p := EncodeBatch(Batch{ProducerID: 1, Records: recs("bench", 100, 100, 1_700_000_000e9)})
	l := newLog(b, Config{})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%10_000 == 0 && i > 0 {
			b.StopTimer()
			l = newLog(b, Config{})
			runtime.GC()
			b.StartTimer()
		}
		batch, err := DecodeBatch(p)
		if err != nil {
			b.Fatal(err)
		}
		batch.ProducerID = 0 // the same bytes every time; skip sequencing
		if _, err := l.Append(batch, 1); err != nil {
			b.Fatal(err)
		}
	}
}

var (
	millionOnce sync.Once
	millionLog  *Log
)

// million builds, once, a log of 1,000,000 records with 100-byte values
// the way the broker would: 10,000 decoded batches of 100.
func million(b *testing.B) *Log {
	millionOnce.Do(func() {
		l := newLog(b, Config{})
		for i := range 10_000 {
			in := Batch{ProducerID: 1, BaseSeq: int32(i * 100), Records: make([]Record, 100)}
			for j := range in.Records {
				v := make([]byte, 100)
				v[0], v[1] = byte(i), byte(j)
				in.Records[j] = Record{Timestamp: 1_700_000_000e9 + int64(i*100+j)*1000, Value: v, MsgID: fmt.Sprintf("bench:%d", i*100+j)}
			}
			batch, err := DecodeBatch(EncodeBatch(in))
			if err != nil {
				b.Fatal(err)
			}
			mustAppend(b, l, batch, uint64(1+i/1000))
		}
		millionLog = l
	})
	return millionLog
}

// BenchmarkSnapshot1M encodes and decodes a 1,000,000-record log.
func BenchmarkSnapshot1M(b *testing.B) {
	l := million(b)
	var buf bytes.Buffer
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf.Reset()
		if _, err := l.WriteTo(&buf); err != nil {
			b.Fatal(err)
		}
		got, err := ReadLog(bytes.NewReader(buf.Bytes()))
		if err != nil {
			b.Fatal(err)
		}
		if got.EndOffset() != 1_000_000 {
			b.Fatalf("decoded %d records", got.EndOffset())
		}
	}
	b.ReportMetric(float64(buf.Len()), "snapshot-bytes")
}

// BenchmarkSnapshot1MWrite and BenchmarkSnapshot1MRead split the above.
func BenchmarkSnapshot1MWrite(b *testing.B) {
	l := million(b)
	var buf bytes.Buffer
	l.WriteTo(&buf)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf.Reset()
		if _, err := l.WriteTo(&buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSnapshot1MRead(b *testing.B) {
	var buf bytes.Buffer
	million(b).WriteTo(&buf)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ReadLog(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHeap1M reports the heap a 1,000,000-record log holds, per record
// (the memory budget is what matters; the timing is incidental).
func BenchmarkHeap1M(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		l := newLog(b, Config{})
		for i := range 10_000 {
			in := Batch{Records: make([]Record, 100)}
			for j := range in.Records {
				in.Records[j] = Record{Timestamp: int64(i*100 + j), Value: make([]byte, 100), MsgID: fmt.Sprintf("bench:%d", i*100+j)}
			}
			batch, _ := DecodeBatch(EncodeBatch(in))
			mustAppend(b, l, batch, 1)
		}
		b.StopTimer()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "heap-bytes/record")
		runtime.KeepAlive(l)
		b.StartTimer()
	}
}
