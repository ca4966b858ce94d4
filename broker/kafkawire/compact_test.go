package kafkawire

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
)

// A topic created by a Kafka client with cleanup.policy=compact, cleaned
// by a pass: kgo reading it from offset 0 gets the newest value of each
// key in the cleaned part, offsets increasing with gaps.
func TestKgoReadsACompactedTopic(t *testing.T) {
	t.Parallel()
	l := newLab(t, 3)
	cl := l.client(t, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ClientID("accounts"))
	ctx := ctxFor(t, 30*time.Second)

	create := func(name, policy string, more ...string) int16 {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 3
		kv := append([]string{"cleanup.policy", policy}, more...)
		for i := 0; i+1 < len(kv); i += 2 {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = kv[i], kmsg.StringPtr(kv[i+1])
			rt.Configs = append(rt.Configs, c)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("create topics: %v", err)
		}
		return resp.Topics[0].ErrorCode
	}
	if code := create("bad", "shred"); code != kerr.InvalidConfig.Code {
		t.Fatalf("cleanup.policy=shred: error code %d, want INVALID_CONFIG", code)
	}
	// Retention by age contradicts a compact-only policy.
	if code := create("bad", "compact", "retention.ms", "60000"); code != kerr.InvalidConfig.Code {
		t.Fatalf("compact with retention.ms: error code %d, want INVALID_CONFIG", code)
	}
	if code := create("accounts", "compact"); code != 0 {
		t.Fatalf("create accounts: error code %d", code)
	}

	// One record a request, so each is a batch of its own: 16-record
	// segments, [0,16) closed and [16,20) active; keys k0–k3 in turn.
	for i := range 20 {
		r := &kgo.Record{Topic: "accounts", Key: []byte(fmt.Sprintf("k%d", i%4)), Value: []byte(fmt.Sprintf("v%d", i))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	err := cl.ProduceSync(ctx, &kgo.Record{Topic: "accounts", Value: []byte("no key")}).FirstErr()
	if !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("an unkeyed record: %v, want INVALID_RECORD", err)
	}
	res, cleaned, err := l.c.Compact(ctx, broker.TopicPartition{Topic: "accounts", Partition: 0})
	if err != nil || !cleaned || res.RecordsAfter != 4 {
		t.Fatalf("compact: %+v %v %v; want 4 records left of the closed 16", res, cleaned, err)
	}

	consumer := l.client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"accounts": {0: kgo.NewOffset().At(0)}}))
	var offsets []int64
	var values []string
	for len(offsets) < 8 {
		fs := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %v so far: %v", offsets, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) {
			offsets = append(offsets, r.Offset)
			values = append(values, string(r.Key)+"="+string(r.Value))
		})
	}
	want := []int64{12, 13, 14, 15, 16, 17, 18, 19}
	if fmt.Sprint(offsets) != fmt.Sprint(want) {
		t.Fatalf("offsets read from 0: %v, want %v", offsets, want)
	}
	if values[0] != "k0=v12" || values[3] != "k3=v15" || values[4] != "k0=v16" {
		t.Fatalf("values read: %v", values)
	}

	// A tombstone from a Kafka client stays null all the way: the cleaner
	// tells a delete from an empty value by it. It comes from the client
	// whose batch was refused above: an idempotent client bumps its
	// producer epoch after that and starts its sequence again at 0, and
	// the partition must take that batch, not answer it as a duplicate.
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "accounts", Key: []byte("k1")}).FirstErr(); err != nil {
		t.Fatalf("produce a tombstone: %v", err)
	}
	var tomb *kgo.Record
	for tomb == nil {
		fs := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("waiting for the tombstone: %v", err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) { tomb = r })
	}
	if tomb.Offset != 20 || tomb.Value != nil {
		t.Fatalf("the tombstone came back at %d with value %q (nil: %v); want offset 20 and a null value", tomb.Offset, tomb.Value, tomb.Value == nil)
	}
}
