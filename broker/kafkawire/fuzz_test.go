package kafkawire

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
)

// requestFrame encodes req as a client would frame it, without the size.
func requestFrame(req kmsg.Request, version int16, client string) []byte {
	req.SetVersion(version)
	b := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, 7)
	b = binary.BigEndian.AppendUint16(b, uint16(len(client)))
	b = append(b, client...)
	if req.IsFlexible() {
		b = append(b, 0)
	}
	return req.AppendTo(b)
}

// FuzzRequest feeds the request decoder, and the record batch reader for
// what decodes as a produce, arbitrary bytes: they may be refused, never
// panic.
func FuzzRequest(f *testing.F) {
	produce := kmsg.NewPtrProduceRequest()
	produce.Acks = -1
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "orders"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = appendBatches(nil, []broker.Record{
		{Offset: 0, Epoch: 1, Timestamp: time.UnixMilli(1), Key: []byte("user-1"), Value: []byte("order 1")},
		{Offset: 1, Epoch: 1, Timestamp: time.UnixMilli(2), Value: []byte("order 2")},
	})
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)
	f.Add(requestFrame(produce, 9, "kcat"))
	f.Add(requestFrame(produce, 3, "kcat"))
	f.Add(requestFrame(kmsg.NewPtrApiVersionsRequest(), 3, "kgo"))
	f.Add(requestFrame(kmsg.NewPtrMetadataRequest(), 9, ""))
	f.Add(requestFrame(kmsg.NewPtrJoinGroupRequest(), 7, "kgo"))
	f.Add(requestFrame(kmsg.NewPtrFetchRequest(), 12, "kgo"))
	f.Fuzz(func(t *testing.T, body []byte) {
		pr, err := parseRequest(body)
		if err != nil {
			return
		}
		if req, ok := pr.req.(*kmsg.ProduceRequest); ok {
			for _, t := range req.Topics {
				for _, p := range t.Partitions {
					readBatches(p.Records) //nolint:errcheck // refusing is fine
				}
			}
		}
	})
}
