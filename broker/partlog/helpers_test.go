package partlog

import (
	"fmt"
	"testing"
)

// recs makes n records with values of size bytes, timestamps from ts0 one
// second apart, and keys/ids derived from tag so records are told apart.
func recs(tag string, n, size int, ts0 int64) []Record {
	out := make([]Record, n)
	for i := range out {
		v := make([]byte, size)
		for j := range v {
			v[j] = byte('a' + (i+j)%26)
		}
		out[i] = Record{
			Timestamp: ts0 + int64(i)*1e9,
			Key:       []byte(fmt.Sprintf("%s-k%d", tag, i)),
			Value:     v,
			MsgID:     fmt.Sprintf("%s:%d", tag, i),
		}
	}
	return out
}

func newLog(t testing.TB, cfg Config) *Log {
	t.Helper()
	l, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return l
}

func mustAppend(t testing.TB, l *Log, b Batch, epoch uint64) AppendResult {
	t.Helper()
	res, err := l.Append(b, epoch)
	if err != nil {
		t.Fatalf("Append(pid %d seq %d, %d records): %v", b.ProducerID, b.BaseSeq, len(b.Records), err)
	}
	return res
}

// readAll reads every retained record, checking Read's contract on the way.
func readAll(t testing.TB, l *Log) []Record {
	t.Helper()
	got, err := l.Read(l.StartOffset(), int(l.EndOffset()-l.StartOffset())+1)
	if err != nil {
		t.Fatalf("Read all: %v", err)
	}
	return got
}

func recordBytes(r *Record) int64 { return int64(len(r.Key)) + int64(len(r.Value)) }

// appendEach appends every record of recs as a batch of its own, as a
// producer with batch size 1 would, and returns the first offset.
func appendEach(t testing.TB, l *Log, recs []Record, epoch uint64) int64 {
	t.Helper()
	first := l.EndOffset()
	for i := range recs {
		mustAppend(t, l, Batch{Records: recs[i : i+1]}, epoch)
	}
	return first
}
