package kafkawire

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
)

// configMap is a described resource's configs by name: value and source.
func configMap(rc kadm.ResourceConfig) map[string]kadm.Config {
	out := map[string]kadm.Config{}
	for _, c := range rc.Configs {
		out[c.Key] = c
	}
	return out
}

// kadm describes a topic's configs with the values its partitions use,
// each marked as given or the default; a missing topic is
// UNKNOWN_TOPIC_OR_PARTITION on its own, and a change is refused with why.
func TestDescribeTopicConfigsWithKadm(t *testing.T) {
	dir := t.TempDir()
	l := newLabIn(t, dir, 3,
		broker.TopicConfig{Name: "orders", Partitions: 1},
		broker.TopicConfig{Name: "prices", Partitions: 1, Cleanup: broker.CleanupCompact, DeleteRetention: time.Minute, DirtyRatio: 0.2},
		broker.TopicConfig{Name: "clicks", Partitions: 1, RF: 1, SegmentBytes: 4096, SegmentAge: time.Hour, RetentionAge: 10 * time.Minute, RetentionBytes: 1 << 20},
	)
	adm := kadm.NewClient(l.client(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rcs, err := adm.DescribeTopicConfigs(ctx, "orders", "prices", "clicks", "missing")
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	// Where a value comes from, as Kafka says it: set on the topic, the
	// node's setting (a server.properties line), or Kafka's own default.
	const (
		onTopic = kmsg.ConfigSourceDynamicTopicConfig
		static  = kmsg.ConfigSourceStaticBrokerConfig
		builtin = kmsg.ConfigSourceDefaultConfig
	)
	type want struct {
		value  string
		source kmsg.ConfigSource
	}
	wants := map[string]map[string]want{
		"orders": {"cleanup.policy": {"delete", builtin}, "retention.ms": {"-1", static}, "retention.bytes": {"-1", builtin},
			"segment.bytes": {"2147483647", static}, "segment.ms": {"9223372036854775807", static}, "mqlab.segment.records": {"16", builtin},
			"delete.retention.ms": {"86400000", builtin}, "min.cleanable.dirty.ratio": {"0.5", builtin}, "min.insync.replicas": {"2", static}, "index.interval.bytes": {"64", static}},
		"prices": {"cleanup.policy": {"compact", onTopic}, "delete.retention.ms": {"60000", onTopic}, "min.cleanable.dirty.ratio": {"0.2", onTopic},
			"retention.ms": {"-1", static}, "mqlab.segment.records": {"16", builtin}},
		"clicks": {"segment.bytes": {"4096", onTopic}, "segment.ms": {"3600000", onTopic}, "retention.ms": {"600000", onTopic},
			"retention.bytes": {"1048576", onTopic}, "mqlab.segment.records": {"-1", builtin}, "min.insync.replicas": {"1", onTopic}},
	}
	for topic, w := range wants {
		rc, err := rcs.On(topic, nil)
		if err != nil || rc.Err != nil {
			t.Errorf("%s: %v %v %s", topic, err, rc.Err, rc.ErrMessage)
			continue
		}
		got := configMap(rc)
		for name, wv := range w {
			c, ok := got[name]
			switch {
			case !ok || c.Value == nil:
				t.Errorf("%s: no %s among %d configs", topic, name, len(rc.Configs))
			case *c.Value != wv.value:
				t.Errorf("%s: %s = %s; want %s", topic, name, *c.Value, wv.value)
			case c.Source != wv.source:
				t.Errorf("%s: %s's source is %v; want %v", topic, name, c.Source, wv.source)
			}
		}
	}
	// Synonyms, in order of precedence: the topic's own setting, the
	// node's under its broker name, Kafka's default under its own.
	synonyms := func(topic, name string) string {
		rc, _ := rcs.On(topic, nil)
		var out []string
		for _, s := range configMap(rc)[name].Synonyms {
			out = append(out, fmt.Sprintf("%s=%s %v", s.Key, *s.Value, s.Source))
		}
		return strings.Join(out, ", ")
	}
	for _, tc := range []struct{ topic, name, want string }{
		{"clicks", "retention.ms", "retention.ms=600000 DYNAMIC_TOPIC_CONFIG, log.retention.ms=-1 STATIC_BROKER_CONFIG, log.retention.hours=168 DEFAULT_CONFIG"},
		{"orders", "retention.ms", "log.retention.ms=-1 STATIC_BROKER_CONFIG, log.retention.hours=168 DEFAULT_CONFIG"},
		{"prices", "cleanup.policy", "cleanup.policy=compact DYNAMIC_TOPIC_CONFIG, log.cleanup.policy=delete DEFAULT_CONFIG"},
		{"prices", "min.cleanable.dirty.ratio", "min.cleanable.dirty.ratio=0.2 DYNAMIC_TOPIC_CONFIG, log.cleaner.min.cleanable.ratio=0.5 DEFAULT_CONFIG"},
		{"orders", "index.interval.bytes", "log.index.interval.bytes=64 STATIC_BROKER_CONFIG, log.index.interval.bytes=4096 DEFAULT_CONFIG"},
		{"clicks", "segment.ms", "segment.ms=3600000 DYNAMIC_TOPIC_CONFIG, log.roll.ms=9223372036854775807 STATIC_BROKER_CONFIG, log.roll.hours=168 DEFAULT_CONFIG"},
		{"clicks", "min.insync.replicas", "min.insync.replicas=1 DYNAMIC_TOPIC_CONFIG, min.insync.replicas=2 STATIC_BROKER_CONFIG, min.insync.replicas=1 DEFAULT_CONFIG"},
		{"orders", "mqlab.segment.records", ""},
	} {
		if got := synonyms(tc.topic, tc.name); got != tc.want {
			t.Errorf("%s %s's synonyms: %s\nwant %s", tc.topic, tc.name, got, tc.want)
		}
	}
	missing, _ := rcs.On("missing", nil)
	if !errors.Is(missing.Err, kerr.UnknownTopicOrPartition) || len(missing.Configs) != 0 {
		t.Errorf("missing topic: %v, %d configs; want UNKNOWN_TOPIC_OR_PARTITION and none", missing.Err, len(missing.Configs))
	}

	brokers, err := adm.DescribeBrokerConfigs(ctx, 2)
	if err != nil || len(brokers) != 1 || brokers[0].Err != nil {
		t.Fatalf("describe broker 2: %v %+v", err, brokers)
	}
	bc := configMap(brokers[0])
	if c := bc["broker.id"]; c.Value == nil || *c.Value != "2" {
		t.Errorf("broker 2 says broker.id %v", c.Value)
	}
	if c := bc["log.dirs"]; c.Value == nil || *c.Value != filepath.Join(dir, "n2") {
		t.Errorf("broker 2 says log.dirs %v; want %s", c.Value, filepath.Join(dir, "n2"))
	}
	if c := bc["default.replication.factor"]; c.Value == nil || *c.Value != "3" || c.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Errorf("broker 2 says default.replication.factor %v from %v; want 3, a static broker config", c.Value, c.Source)
	}
	if c := bc["log.retention.ms"]; len(c.Synonyms) != 2 || c.Synonyms[1].Key != "log.retention.hours" || c.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Errorf("broker 2's log.retention.ms: %+v; want a static broker config over Kafka's log.retention.hours", c)
	}

	one := "1"
	alters, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: &one}}, "orders", "missing")
	if err != nil {
		t.Fatalf("alter: %v", err)
	}
	if a, _ := alters.On("orders", nil); !errors.Is(a.Err, kerr.InvalidRequest) || !strings.Contains(a.ErrMessage, "create a new topic") {
		t.Errorf("alter orders: %v %q; want INVALID_REQUEST saying to create a new topic", a.Err, a.ErrMessage)
	}
	if a, _ := alters.On("missing", nil); !errors.Is(a.Err, kerr.UnknownTopicOrPartition) {
		t.Errorf("alter missing: %v; want UNKNOWN_TOPIC_OR_PARTITION", a.Err)
	}
	rcs, err = adm.DescribeTopicConfigs(ctx, "orders")
	if c := configMap(rcs[0])["retention.ms"]; err != nil || c.Value == nil || *c.Value != "-1" {
		t.Errorf("after a refused alter, orders' retention.ms is %v (%v); want -1", c.Value, err)
	}
}

// A describe asked of the wrong broker, or of a kind of resource the lab
// has no configs for, is refused with what would work; names narrow the
// answer; documentation comes when asked.
func TestDescribeConfigsRefusals(t *testing.T) {
	l := newLab(t, 3, broker.TopicConfig{Name: "orders", Partitions: 1})
	cl := l.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeDocumentation = true
	add := func(typ kmsg.ConfigResourceType, name string, names ...string) {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName, r.ConfigNames = typ, name, names
		req.Resources = append(req.Resources, r)
	}
	add(kmsg.ConfigResourceTypeTopic, "orders", "retention.ms", "no.such.config")
	add(kmsg.ConfigResourceTypeBroker, "3")
	add(kmsg.ConfigResourceTypeBroker, "ten")
	add(kmsg.ConfigResourceTypeBrokerLogger, "1")
	// Sent to broker 1: broker resources are each broker's own.
	resp, err := req.RequestWith(ctx, cl.Broker(1))
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	if len(resp.Resources) != 4 {
		t.Fatalf("%d resources answered; want 4", len(resp.Resources))
	}
	topic := resp.Resources[0]
	if topic.ErrorCode != 0 || len(topic.Configs) != 1 || topic.Configs[0].Name != "retention.ms" ||
		topic.Configs[0].Documentation == nil || topic.Configs[0].Source != kmsg.ConfigSourceStaticBrokerConfig ||
		len(topic.Configs[0].ConfigSynonyms) != 0 {
		t.Errorf("orders, retention.ms only: %+v", topic)
	}
	for i, want := range []string{"this is broker 1", "this is broker 1", "mqlab describes topics"} {
		r := resp.Resources[i+1]
		if r.ErrorCode != codeInvalidRequest || r.ErrorMessage == nil || !strings.Contains(*r.ErrorMessage, want) {
			t.Errorf("%v %q: code %d, %v; want INVALID_REQUEST saying %q", r.ResourceType, r.ResourceName, r.ErrorCode, r.ErrorMessage, want)
		}
	}
}
