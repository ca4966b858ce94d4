package kafkawire

import (
	"bytes"
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
)

// A fetch answer with two partitions' file ranges spliced in decodes, in
// a version before flexible encoding and in one after, as the answer
// whose records were those bytes all along; the frame's size is right.
func TestSplicedFetchAnswerDecodes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "segment.log")
	content := bytes.Repeat([]byte("0123456789abcdef"), 300) // 4,800 bytes: a length past one varint byte
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, version := range []int16{11, 12} {
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(version)
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = "orders"
		var splices []splice
		ranges := [][2]int64{{100, 4000}, {7, 30}}
		for i, r := range ranges {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			sp := newSplice(&broker.FileRange{File: f, Pos: r[0], Len: r[1]})
			splices = append(splices, sp)
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition, p.HighWatermark, p.RecordBatches = int32(i), 99, sp.marker
			rt.Partitions = append(rt.Partitions, p)
		}
		resp.Topics = append(resp.Topics, rt)
		a, err := spliceFrame(frame(7, resp.IsFlexible(), resp), resp.IsFlexible(), splices)
		if err != nil {
			t.Fatal(err)
		}
		client, server := net.Pipe()
		done := make(chan error, 1)
		go func() { done <- a.writeTo(server); server.Close() }()
		var got bytes.Buffer
		if _, err := got.ReadFrom(client); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("v%d: write: %v", version, err)
		}
		b := got.Bytes()
		if size := int(binary.BigEndian.Uint32(b)); size != len(b)-4 {
			t.Fatalf("v%d: the frame says %d bytes, %d follow", version, size, len(b)-4)
		}
		body := b[8:]
		if resp.IsFlexible() {
			body = body[1:] // the response header's tagged fields
		}
		back := kmsg.NewPtrFetchResponse()
		back.SetVersion(version)
		if err := back.ReadFrom(body); err != nil {
			t.Fatalf("v%d: the spliced answer does not decode: %v", version, err)
		}
		for i, r := range ranges {
			p := back.Topics[0].Partitions[i]
			if !bytes.Equal(p.RecordBatches, content[r[0]:r[0]+r[1]]) || p.HighWatermark != 99 {
				t.Errorf("v%d partition %d: %d record bytes, high-water mark %d; want the file's %d bytes from %d", version, i, len(p.RecordBatches), p.HighWatermark, r[1], r[0])
			}
		}
	}
}
