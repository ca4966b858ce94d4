package partlog

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// BenchmarkAppend appends batches of 100 records with 100-byte values given
// as a Batch, which Append encodes. The log is replaced every 10,000
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

// BenchmarkAppendEncoded is the whole FSM apply path for one 100-record
// batch: the entry's bytes are checked and stored as they are.
func BenchmarkAppendEncoded(b *testing.B) {
	// No producer id: the same bytes every time, so skip sequencing.
	p := EncodeBatch(Batch{Records: recs("bench", 100, 100, 1_700_000_000e9)})
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
		if _, err := l.AppendEncoded(p, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/record")
}

// BenchmarkDecodeBatch decodes a 100-record batch, as the display of a
// replica's uncommitted tail does.
func BenchmarkDecodeBatch(b *testing.B) {
	p := EncodeBatch(Batch{ProducerID: 1, Records: recs("bench", 100, 100, 1_700_000_000e9)})
	b.ReportAllocs()
	b.SetBytes(100 * 100)
	for i := 0; i < b.N; i++ {
		if _, err := DecodeBatch(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead reads 100 records from a random offset of the
// 1,000,000-record log, as a consumer's fetch does: two batches decoded.
func BenchmarkRead(b *testing.B) {
	l := million(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		off := int64(i*7919) % 999_900
		recs, err := l.Read(off, 100)
		if err != nil || len(recs) != 100 || recs[0].Offset != off {
			b.Fatalf("Read(%d): %d records, %v", off, len(recs), err)
		}
	}
}

// BenchmarkOffsetForTime looks up a time in the 1,000,000-record log.
func BenchmarkOffsetForTime(b *testing.B) {
	l := million(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := int64(i*7919) % 1_000_000
		if off, ok := l.OffsetForTime(1_700_000_000e9 + k*1000); !ok || off != k {
			b.Fatalf("OffsetForTime(record %d) = %d, %v", k, off, ok)
		}
	}
}

var (
	millionOnce sync.Once
	millionLog  *Log
)

// million builds, once, a log of 1,000,000 records with 100-byte values
// the way the broker would: 10,000 encoded batches of 100, appended as
// they are.
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
			if _, err := l.AppendEncoded(EncodeBatch(in), uint64(1+i/1000)); err != nil {
				b.Fatal(err)
			}
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
// (the memory budget is what matters; the timing is incidental). The
// batches are built as a replica gets them: one encoded raft entry per 100
// records, which the log keeps.
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
			if _, err := l.AppendEncoded(EncodeBatch(in), 1); err != nil {
				b.Fatal(err)
			}
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

// BenchmarkAppendEncodedFiles is BenchmarkAppendEncoded with the log
// writing its segment files: what a replica pays for a folder, for a
// batch in the lab's encoding (which the replica turns into Kafka's for
// its file) and in Kafka's (version 9, as a leader of replicas with
// files proposes the lab's records), which goes to the file as it is.
func BenchmarkAppendEncodedFiles(b *testing.B) {
	for _, form := range []string{"lab", "kafka"} {
		for _, n := range []int{1, 10, 100} {
			b.Run(fmt.Sprintf("form=%s/records=%d", form, n), func(b *testing.B) {
				batch := Batch{Records: recs("bench", n, 100, 1_700_000_000e9)}
				p := EncodeBatch(batch)
				if form == "kafka" {
					p = AppendProduceBatch(nil, batch)
				}
				dir := b.TempDir()
				l := newLog(b, Config{SegmentBytes: 1 << 20})
				if err := l.AttachDir(dir); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.SetBytes(int64(n) * 100)
				for i := 0; b.Loop(); i++ {
					if i%10_000 == 0 && i > 0 {
						b.StopTimer()
						l.DetachDir()
						l = newLog(b, Config{SegmentBytes: 1 << 20})
						if err := l.AttachDir(dir); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
					}
					if _, err := l.AppendEncoded(p, 1); err != nil {
						b.Fatal(err)
					}
				}
				l.DetachDir()
			})
		}
	}
}

// BenchmarkEncodeProduce is a leader's encoding of a batch of 100
// records with 100-byte values, in the lab's encoding and in Kafka's
// (AppendProduceBatch), each into a buffer of its exact size.
func BenchmarkEncodeProduce(b *testing.B) {
	batch := Batch{ProducerID: 2, Records: recs("bench", 100, 100, 1_700_000_000e9)}
	for _, form := range []string{"lab", "kafka"} {
		b.Run("form="+form, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(100 * 100)
			for b.Loop() {
				if form == "lab" {
					_ = AppendBatch(make([]byte, 0, BatchSize(batch)), batch)
				} else {
					_ = AppendProduceBatch(make([]byte, 0, ProduceBatchSize(batch)), batch)
				}
			}
		})
	}
}

// BenchmarkReadFiles reads 100 records at a time, forward as a consumer
// does, from a log of 100,000 records in batches of 100 whose closed
// segments (1 MiB) keep their batches in their files only; "jump" reads
// at scattered offsets, so nearly every read goes to a file.
func BenchmarkReadFiles(b *testing.B) {
	const n = 100_000
	l := newLog(b, Config{SegmentBytes: 1 << 20})
	if err := l.AttachDir(b.TempDir()); err != nil {
		b.Fatal(err)
	}
	for i := range n / 100 {
		mustAppend(b, l, Batch{Records: recs("bench", 100, 100, 1_700_000_000e9+int64(i)*1e11)}, 1)
	}
	for _, tc := range []struct {
		name string
		at   func(i int) int64
	}{
		{"forward", func(i int) int64 { return int64(i*100) % (n - 100) }},
		{"jump", func(i int) int64 { return int64(i*7919) % (n - 100) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				off := tc.at(i)
				recs, err := l.Read(off, 100)
				if err != nil || len(recs) != 100 || recs[0].Offset != off {
					b.Fatalf("Read(%d): %d records, %v", off, len(recs), err)
				}
			}
		})
	}
}
