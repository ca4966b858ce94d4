package partcmd

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mqlab/mqlab/broker/partlog"
)

func TestProduceCommandHeader(t *testing.T) {
	b := partlog.Batch{ProducerID: 7, BaseSeq: 40, Records: []partlog.Record{
		{Timestamp: 5, Key: []byte("k"), Value: []byte("v1"), MsgID: "c:1"},
		{Timestamp: 9, Value: []byte("v2")},
		{Timestamp: 7, Value: []byte{}},
	}}
	data := EncodeProduce(123, 456, b)
	if len(data) != cap(data) {
		t.Fatalf("EncodeProduce left %d bytes of spare capacity", cap(data)-len(data))
	}
	cmd, rest, err := DecodeHeader(data)
	if err != nil || cmd.Kind != Produce || cmd.ReqID != 123 || cmd.Now != 456 || cmd.Count != 3 {
		t.Fatalf("DecodeHeader = %+v, %v", cmd, err)
	}
	if !bytes.Equal(rest, partlog.EncodeBatch(b)) || &rest[0] != &data[len(data)-len(rest)] {
		t.Fatal("the batch after the header is not the partlog encoding, in place")
	}
	full, err := Decode(data)
	if err != nil || len(full.Batch.Records) != 3 || full.Batch.ProducerID != 7 || full.Batch.BaseSeq != 40 || string(full.Batch.Records[1].Value) != "v2" {
		t.Fatalf("Decode = %+v, %v", full, err)
	}
	// Damage is an error, never a panic.
	for n := range len(data) {
		if _, _, err := DecodeHeader(data[:n]); err == nil && n > 0 {
			if _, err := Decode(data[:n]); !errors.Is(err, ErrBad) {
				t.Fatalf("truncated to %d bytes: Decode said %v", n, err)
			}
		}
	}
}
