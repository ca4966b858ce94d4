package kafkawire

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mqlab/mqlab/broker"
)

// Bad input on one connection closes that connection with an event that
// says what was wrong; the node goes on serving the others.
func TestBadInputClosesOnlyItsConnection(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	l := newLab(t, 1, broker.TopicConfig{Name: "orders", Partitions: 1})
	cases := []struct {
		name  string
		frame []byte
		says  string
	}{
		{"oversized", binary.BigEndian.AppendUint32(nil, 200<<20), "a request takes 8 to"},
		{"unknown key", append(binary.BigEndian.AppendUint32(nil, 10), 0x7f, 0x00, 0, 0, 0, 0, 0, 1, 0, 0), "API key 32512"},
		{"unsupported version", append(binary.BigEndian.AppendUint32(nil, 10), 0, 0, 0, 1, 0, 0, 0, 1, 0, 0), "Produce version 1"},
		{"garbage body", append(binary.BigEndian.AppendUint32(nil, 13), 0, 3, 0, 9, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff), "does not decode"},
		{"bad header tags", append(binary.BigEndian.AppendUint32(nil, 12), 0, 3, 0, 9, 0, 0, 0, 1, 0, 0, 0xff, 0xff), "tagged fields are cut short"},
		{"truncated", append(binary.BigEndian.AppendUint32(nil, 50), 0, 3, 0, 9), "stopped before its end"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nc, err := net.Dial("tcp", l.s.Addr("n1"))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			if _, err := nc.Write(tc.frame); err != nil {
				t.Fatal(err)
			}
			if tc.name == "truncated" {
				nc.(*net.TCPConn).CloseWrite()
			}
			nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			if n, err := nc.Read(make([]byte, 64)); err != io.EOF {
				t.Fatalf("after %s, read %d bytes, %v; want the node to close the connection", tc.name, n, err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for !reported(l.c, tc.says) {
				if time.Now().After(deadline) {
					t.Fatalf("no event says %q after %s", tc.says, tc.name)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	cl := l.client(t, kgo.DefaultProduceTopic("orders"))
	if err := cl.ProduceSync(ctxFor(t, 10*time.Second), &kgo.Record{Value: []byte("still here")}).FirstErr(); err != nil {
		t.Fatalf("a good client after the bad ones: %v", err)
	}
}

func reported(c *broker.Cluster, text string) bool {
	for _, e := range c.Events(0) {
		if e.Kind == broker.EventClient && strings.Contains(e.Text, text) {
			return true
		}
	}
	return false
}
