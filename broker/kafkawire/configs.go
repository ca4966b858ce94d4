package kafkawire

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
)

// configEntry is one config a describe answers with: its Kafka name, the
// value in force, whether the topic was created with it, what it means in
// the lab, and the broker setting it falls back to.
type configEntry struct {
	name, value string
	onTopic     bool // set on the topic, which overrides the broker's
	readOnly    bool
	kind        kmsg.ConfigType
	doc         string
	broker      *brokerSetting // nil for a config with no broker setting behind it
}

// brokerSetting is a setting a lab node starts with, by its name in a
// Kafka broker's server.properties, beside the default Kafka itself would
// use. A describe with synonyms lists them in Kafka's order of precedence:
// the node's setting as STATIC_BROKER_CONFIG when the lab sets it to
// something else than Kafka's default, then Kafka's default as
// DEFAULT_CONFIG (under its own name, which may differ: log.retention.ms
// falls back to log.retention.hours).
type brokerSetting struct {
	name, value           string
	kafkaName, kafkaValue string // kafkaName "" when it is name
}

func (b *brokerSetting) synonyms() []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	syn := func(name, value string, src kmsg.ConfigSource) kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
		s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
		s.Name, s.Value, s.Source = name, &value, src
		return s
	}
	kafkaName := b.kafkaName
	if kafkaName == "" {
		kafkaName = b.name
	}
	if kafkaName == b.name && b.value == b.kafkaValue {
		return []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{syn(b.name, b.value, kmsg.ConfigSourceDefaultConfig)}
	}
	return []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{
		syn(b.name, b.value, kmsg.ConfigSourceStaticBrokerConfig),
		syn(kafkaName, b.kafkaValue, kmsg.ConfigSourceDefaultConfig),
	}
}

// The log settings a node starts with, which a topic created without
// configs takes, and Kafka's defaults for them.
var (
	brokerCleanupPolicy   = brokerSetting{name: "log.cleanup.policy", value: broker.CleanupDelete, kafkaValue: "delete"}
	brokerDeleteRetention = brokerSetting{name: "log.cleaner.delete.retention.ms", kafkaValue: "86400000"}
	brokerIndexInterval   = brokerSetting{name: "log.index.interval.bytes", kafkaValue: "4096"}
	brokerDirtyRatio      = brokerSetting{name: "log.cleaner.min.cleanable.ratio", kafkaValue: "0.5"}
	brokerRetentionBytes  = brokerSetting{name: "log.retention.bytes", value: "-1", kafkaValue: "-1"}
	brokerRetentionMs     = brokerSetting{name: "log.retention.ms", value: "-1", kafkaName: "log.retention.hours", kafkaValue: "168"}
	brokerSegmentBytes    = brokerSetting{name: "log.segment.bytes", value: strconv.Itoa(math.MaxInt32), kafkaValue: "1073741824"}
	brokerSegmentMs       = brokerSetting{name: "log.roll.ms", value: strconv.FormatInt(math.MaxInt64, 10), kafkaName: "log.roll.hours", kafkaValue: "168"}
)

// withValue is b with the node's value.
func (b brokerSetting) withValue(v string) *brokerSetting {
	b.value = v
	return &b
}

// minInSync is the broker's min.insync.replicas: a majority of the
// default replication factor.
func minInSync(defaultRF int) *brokerSetting {
	return &brokerSetting{name: "min.insync.replicas", value: strconv.Itoa(defaultRF/2 + 1), kafkaValue: "1"}
}

// topicConfigEntries is a topic's configuration by Kafka's names, the
// values those the partitions use, sorted by name as kafka-configs
// prints them; defaultRF is the nodes' default replication factor.
func topicConfigEntries(cfg broker.TopicConfig, defaultRF int) []configEntry {
	st := cfg.Settings()
	def := broker.TopicConfig{}.Settings()
	millis := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	retentionMs, retentionBytes := "-1", "-1"
	if cfg.RetentionAge > 0 {
		retentionMs = millis(cfg.RetentionAge)
	}
	if cfg.RetentionBytes > 0 {
		retentionBytes = strconv.FormatInt(cfg.RetentionBytes, 10)
	}
	// Kafka has no "off" for the segment limits; the largest value it
	// accepts says the same.
	segmentBytes, segmentMs := strconv.Itoa(math.MaxInt32), strconv.FormatInt(math.MaxInt64, 10)
	if cfg.SegmentBytes > 0 {
		segmentBytes = strconv.FormatInt(cfg.SegmentBytes, 10)
	}
	if cfg.SegmentAge > 0 {
		segmentMs = millis(cfg.SegmentAge)
	}
	segmentRecords := "-1"
	if st.SegmentRecords > 0 {
		segmentRecords = strconv.Itoa(st.SegmentRecords)
	}
	retentionNote := ""
	if st.Cleanup == broker.CleanupCompact {
		retentionNote = " Under cleanup.policy=compact nothing is deleted by age or size."
	}
	ratio := func(r float64) string { return strconv.FormatFloat(r, 'g', -1, 64) }
	return []configEntry{
		{name: "cleanup.policy", value: st.Cleanup, onTopic: cfg.Cleanup != "", kind: kmsg.ConfigTypeList, broker: &brokerCleanupPolicy,
			doc: "delete: retention removes whole old segments; compact: the cleaner keeps the newest record of each key; compact,delete: both."},
		{name: "delete.retention.ms", value: millis(st.DeleteRetention), onTopic: cfg.DeleteRetention != 0, kind: kmsg.ConfigTypeLong, broker: brokerDeleteRetention.withValue(millis(def.DeleteRetention)),
			doc: "How long a tombstone (a record with a null value) outlives its timestamp before a compaction pass removes it."},
		{name: "index.interval.bytes", value: strconv.Itoa(st.IndexIntervalBytes), readOnly: true, kind: kmsg.ConfigTypeInt, broker: brokerIndexInterval.withValue(strconv.Itoa(def.IndexIntervalBytes)),
			doc: "A segment's .index and .timeindex get an entry each time this many bytes of keys and values have been appended since the last: far denser than Kafka's 4096, so a small segment shows some."},
		{name: "min.cleanable.dirty.ratio", value: ratio(st.DirtyRatio), onTopic: cfg.DirtyRatio != 0, kind: kmsg.ConfigTypeDouble, broker: brokerDirtyRatio.withValue(ratio(def.DirtyRatio)),
			doc: "A compaction pass starts once this share of the closed segments' bytes arrived since the last pass."},
		// The topic's replication factor sets it: a topic of another RF
		// than the default overrides the broker's.
		{name: "min.insync.replicas", value: strconv.Itoa(st.MinInSync), onTopic: st.MinInSync != defaultRF/2+1, readOnly: true, kind: kmsg.ConfigTypeInt, broker: minInSync(defaultRF),
			doc: fmt.Sprintf("mqlab replicates with raft: acks=all answers once a majority of the %d replicas hold the write, so this is always RF/2+1.", cfg.RF)},
		{name: "mqlab.segment.records", value: segmentRecords, onTopic: cfg.SegmentRecords != 0, readOnly: true, kind: kmsg.ConfigTypeInt,
			doc: fmt.Sprintf("mqlab's own limit, not Kafka's: a segment closes after this many records (-1: no limit). With no segment limit set a segment holds %d, so a small lab shows several.", def.SegmentRecords)},
		{name: "retention.bytes", value: retentionBytes, onTopic: cfg.RetentionBytes != 0, kind: kmsg.ConfigTypeLong, broker: &brokerRetentionBytes,
			doc: "The oldest closed segments are deleted while the rest still hold at least this many bytes (-1: no limit)." + retentionNote},
		{name: "retention.ms", value: retentionMs, onTopic: cfg.RetentionAge != 0, kind: kmsg.ConfigTypeLong, broker: &brokerRetentionMs,
			doc: "Closed segments whose newest record is older than this are deleted (-1: kept forever, mqlab's default; Kafka's is 7 days)." + retentionNote},
		{name: "segment.bytes", value: segmentBytes, onTopic: cfg.SegmentBytes != 0, kind: kmsg.ConfigTypeInt, broker: &brokerSegmentBytes,
			doc: "A segment closes before a batch that would take its records' keys and values past this many bytes."},
		{name: "segment.ms", value: segmentMs, onTopic: cfg.SegmentAge != 0, kind: kmsg.ConfigTypeLong, broker: &brokerSegmentMs,
			doc: "A batch this much newer than the active segment's first starts a new segment."},
	}
}

// brokerConfigEntries is what a node says of itself: the defaults a
// topic created without configs gets, and where its logs are.
func (s *Server) brokerConfigEntries(node string) []configEntry {
	ns := s.c.Front(node, "").Settings()
	rf := ns.DefaultRF
	def := broker.TopicConfig{}.Settings()
	// own is an entry that is the node's setting itself.
	own := func(b *brokerSetting, kind kmsg.ConfigType, doc string) configEntry {
		return configEntry{name: b.name, value: b.value, readOnly: true, kind: kind, broker: b, doc: doc}
	}
	out := []configEntry{
		own(&brokerSetting{name: "auto.create.topics.enable", value: strconv.FormatBool(s.cfg.AutoCreate), kafkaValue: "true"}, kmsg.ConfigTypeBoolean,
			"Whether a metadata request naming a missing topic creates it (mqlab: kafka listen auto-create=true)."),
		own(&brokerSetting{name: "broker.id", value: strconv.Itoa(int(s.brokerID(node))), kafkaValue: "-1"}, kmsg.ConfigTypeInt,
			"This node, "+node+", as Kafka clients number it."),
		own(&brokerSetting{name: "default.replication.factor", value: strconv.Itoa(rf), kafkaValue: "1"}, kmsg.ConfigTypeShort,
			"Replicas of each partition of a topic created without a replication factor: three, or every node in a smaller cluster."),
		own(&brokerCleanupPolicy, kmsg.ConfigTypeList, "The cleanup.policy of a topic created without one."),
		own(brokerDeleteRetention.withValue(strconv.FormatInt(def.DeleteRetention.Milliseconds(), 10)), kmsg.ConfigTypeLong,
			"The delete.retention.ms of a topic created without one."),
		own(brokerIndexInterval.withValue(strconv.Itoa(def.IndexIntervalBytes)), kmsg.ConfigTypeInt,
			"The index.interval.bytes of every topic: denser than Kafka's, so a small segment's indexes show entries."),
		own(brokerDirtyRatio.withValue(strconv.FormatFloat(def.DirtyRatio, 'g', -1, 64)), kmsg.ConfigTypeDouble,
			"The min.cleanable.dirty.ratio of a topic created without one."),
		own(&brokerRetentionBytes, kmsg.ConfigTypeLong, "The retention.bytes of a topic created without one: -1, no limit."),
		own(&brokerRetentionMs, kmsg.ConfigTypeLong, "The retention.ms of a topic created without one: -1, kept forever."),
		own(&brokerSegmentBytes, kmsg.ConfigTypeInt, "The segment.bytes of a topic created without one: the largest Kafka accepts, so segments roll by record count instead."),
		own(&brokerSegmentMs, kmsg.ConfigTypeLong, "The segment.ms of a topic created without one: the largest Kafka accepts, so segments do not roll by age."),
		own(minInSync(rf), kmsg.ConfigTypeInt, "acks=all answers once a majority of a partition's replicas hold the write (raft), so a topic's is RF/2+1."),
		own(&brokerSetting{name: "num.partitions", value: "1", kafkaValue: "1"}, kmsg.ConfigTypeInt,
			"Partitions of a topic created without a count, as auto-create makes them."),
	}
	if ns.LogDir != "" {
		out = append(out, own(&brokerSetting{name: "log.dirs", value: ns.LogDir, kafkaName: "log.dir", kafkaValue: "/tmp/kafka-logs"}, kmsg.ConfigTypeList,
			"The folder of this node's partition logs: one folder per partition, TOPIC-N, of segment files."))
	}
	slices.SortFunc(out, func(a, b configEntry) int { return strings.Compare(a.name, b.name) })
	return out
}

func handleDescribeConfigs(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.DescribeConfigsRequest)
	s := r.cn.s
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, res := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		var entries []configEntry
		var err error
		switch res.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			var cfg broker.TopicConfig
			cfg, err = r.front().TopicConfig(ctx, res.ResourceName)
			if ferr := r.netErr(err); ferr != nil {
				return nil, ferr
			}
			rr.ErrorCode = code(err)
			if err == nil {
				entries = topicConfigEntries(cfg, s.c.Front(r.cn.node, "").Settings().DefaultRF)
			}
		case kmsg.ConfigResourceTypeBroker:
			me := s.brokerID(r.cn.node)
			if res.ResourceName != "" && res.ResourceName != strconv.Itoa(int(me)) {
				rr.ErrorCode = codeInvalidRequest
				err = fmt.Errorf("broker %q: this is broker %d (%s); ask each broker for its own configs, or name none for the defaults", res.ResourceName, me, r.cn.node)
				break
			}
			entries = s.brokerConfigEntries(r.cn.node)
		default:
			rr.ErrorCode = codeInvalidRequest
			err = fmt.Errorf("resource type %s (%d): mqlab describes topics (%d) and brokers (%d)",
				res.ResourceType, int8(res.ResourceType), int8(kmsg.ConfigResourceTypeTopic), int8(kmsg.ConfigResourceTypeBroker))
		}
		if err != nil {
			r.answered("describe of "+res.ResourceType.String()+" "+strconv.Quote(res.ResourceName)+"'s configs", rr.ErrorCode, err)
		}
		rr.ErrorMessage = errText(err)
		for _, e := range entries {
			if res.ConfigNames != nil && !slices.Contains(res.ConfigNames, e.name) {
				continue
			}
			rr.Configs = append(rr.Configs, e.wire(req.IncludeSynonyms, req.IncludeDocumentation))
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

// wire is the entry in a describe's answer. As Kafka does, its source is
// that of its first synonym in order of precedence — the topic's own
// setting, the node's, Kafka's default — and the synonyms are listed when
// asked (versions 1 and later).
func (e configEntry) wire(synonyms, doc bool) kmsg.DescribeConfigsResponseResourceConfig {
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	value := e.value
	c.Name, c.Value, c.ReadOnly, c.ConfigType = e.name, &value, e.readOnly, e.kind
	var syn []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	if e.onTopic {
		s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
		s.Name, s.Value, s.Source = e.name, &value, kmsg.ConfigSourceDynamicTopicConfig
		syn = append(syn, s)
	}
	if e.broker != nil {
		syn = append(syn, e.broker.synonyms()...)
	}
	c.Source = kmsg.ConfigSourceDefaultConfig
	if len(syn) > 0 {
		c.Source = syn[0].Source
	}
	c.IsDefault = c.Source == kmsg.ConfigSourceDefaultConfig // what version 0 says instead
	if synonyms {
		c.ConfigSynonyms = syn
	}
	if doc {
		d := e.doc
		c.Documentation = &d
	}
	return c
}

// errAlterConfigs is why an alter of configs is refused: a topic's
// partitions take their configs when it is created.
var errAlterConfigs = errors.New("mqlab sets a topic's configs when it is created and cannot change them later; create a new topic with the configs you want (CreateTopics configs, or topic create in the lab)")

// refuseAlter is the answer to an alter of one resource's configs: the
// topic must exist (UNKNOWN_TOPIC_OR_PARTITION otherwise, as Kafka says),
// and even then nothing changes.
func refuseAlter(ctx context.Context, r *request, typ kmsg.ConfigResourceType, name string) (int16, error) {
	if typ == kmsg.ConfigResourceTypeTopic {
		_, err := r.front().TopicConfig(ctx, name)
		if ferr := r.netErr(err); ferr != nil {
			return 0, ferr
		}
		if err != nil {
			return code(err), err
		}
	}
	err := fmt.Errorf("%s %q: %w", typ, name, errAlterConfigs)
	r.answered("change of "+typ.String()+" "+strconv.Quote(name)+"'s configs", codeInvalidRequest, err)
	return codeInvalidRequest, err
}

func handleIncrementalAlterConfigs(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.IncrementalAlterConfigsRequest)
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	for _, res := range req.Resources {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		c, err := refuseAlter(ctx, r, res.ResourceType, res.ResourceName)
		if c == 0 {
			return nil, err
		}
		rr.ErrorCode, rr.ErrorMessage = c, errText(err)
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

func handleAlterConfigs(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.AlterConfigsRequest)
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	for _, res := range req.Resources {
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		c, err := refuseAlter(ctx, r, res.ResourceType, res.ResourceName)
		if c == 0 {
			return nil, err
		}
		rr.ErrorCode, rr.ErrorMessage = c, errText(err)
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}
