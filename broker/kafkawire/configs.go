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
// value in force, whether that is the default, and what it means in the
// lab.
type configEntry struct {
	name, value string
	isDefault   bool
	readOnly    bool
	kind        kmsg.ConfigType
	doc         string
}

// topicConfigEntries is a topic's configuration by Kafka's names, the
// values those the partitions use, sorted by name as kafka-configs
// prints them.
func topicConfigEntries(cfg broker.TopicConfig) []configEntry {
	st := cfg.Settings()
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
	return []configEntry{
		{name: "cleanup.policy", value: st.Cleanup, isDefault: cfg.Cleanup == "", kind: kmsg.ConfigTypeList,
			doc: "delete: retention removes whole old segments; compact: the cleaner keeps the newest record of each key; compact,delete: both."},
		{name: "delete.retention.ms", value: millis(st.DeleteRetention), isDefault: cfg.DeleteRetention == 0, kind: kmsg.ConfigTypeLong,
			doc: "How long a tombstone (a record with a null value) outlives its timestamp before a compaction pass removes it."},
		{name: "index.interval.bytes", value: strconv.Itoa(st.IndexIntervalBytes), isDefault: true, readOnly: true, kind: kmsg.ConfigTypeInt,
			doc: "A segment's .index and .timeindex get an entry each time this many bytes of keys and values have been appended since the last: far denser than Kafka's 4096, so a small segment shows some."},
		{name: "min.cleanable.dirty.ratio", value: strconv.FormatFloat(st.DirtyRatio, 'g', -1, 64), isDefault: cfg.DirtyRatio == 0, kind: kmsg.ConfigTypeDouble,
			doc: "A compaction pass starts once this share of the closed segments' bytes arrived since the last pass."},
		{name: "min.insync.replicas", value: strconv.Itoa(st.MinInSync), isDefault: true, readOnly: true, kind: kmsg.ConfigTypeInt,
			doc: fmt.Sprintf("mqlab replicates with raft: acks=all answers once a majority of the %d replicas hold the write, so this is always RF/2+1.", cfg.RF)},
		{name: "mqlab.segment.records", value: segmentRecords, isDefault: cfg.SegmentRecords == 0, readOnly: true, kind: kmsg.ConfigTypeInt,
			doc: fmt.Sprintf("mqlab's own limit, not Kafka's: a segment closes after this many records (-1: no limit). With no segment limit set a segment holds %d, so a small lab shows several.", broker.TopicConfig{}.Settings().SegmentRecords)},
		{name: "retention.bytes", value: retentionBytes, isDefault: cfg.RetentionBytes == 0, kind: kmsg.ConfigTypeLong,
			doc: "The oldest closed segments are deleted while the rest still hold at least this many bytes (-1: no limit)." + retentionNote},
		{name: "retention.ms", value: retentionMs, isDefault: cfg.RetentionAge == 0, kind: kmsg.ConfigTypeLong,
			doc: "Closed segments whose newest record is older than this are deleted (-1: kept forever, mqlab's default; Kafka's is 7 days)." + retentionNote},
		{name: "segment.bytes", value: segmentBytes, isDefault: cfg.SegmentBytes == 0, kind: kmsg.ConfigTypeInt,
			doc: "A segment closes before a batch that would take its records' keys and values past this many bytes."},
		{name: "segment.ms", value: segmentMs, isDefault: cfg.SegmentAge == 0, kind: kmsg.ConfigTypeLong,
			doc: "A batch this much newer than the active segment's first starts a new segment."},
	}
}

// brokerConfigEntries is what a node says of itself: the defaults a
// topic created without configs gets, and where its logs are.
func (s *Server) brokerConfigEntries(node string) []configEntry {
	ns := s.c.Front(node, "").Settings()
	rf := ns.DefaultRF
	auto := strconv.FormatBool(s.cfg.AutoCreate)
	out := []configEntry{
		{name: "auto.create.topics.enable", value: auto, isDefault: !s.cfg.AutoCreate, readOnly: true, kind: kmsg.ConfigTypeBoolean,
			doc: "Whether a metadata request naming a missing topic creates it (mqlab: kafka listen auto-create=true)."},
		{name: "broker.id", value: strconv.Itoa(int(s.brokerID(node))), isDefault: false, readOnly: true, kind: kmsg.ConfigTypeInt,
			doc: "This node, " + node + ", as Kafka clients number it."},
		{name: "default.replication.factor", value: strconv.Itoa(rf), isDefault: true, readOnly: true, kind: kmsg.ConfigTypeShort,
			doc: "Replicas of each partition of a topic created without a replication factor: three, or every node in a smaller cluster."},
		{name: "log.cleanup.policy", value: broker.CleanupDelete, isDefault: true, readOnly: true, kind: kmsg.ConfigTypeList,
			doc: "The cleanup.policy of a topic created without one."},
		{name: "log.retention.ms", value: "-1", isDefault: true, readOnly: true, kind: kmsg.ConfigTypeLong,
			doc: "The retention.ms of a topic created without one: -1, kept forever."},
		{name: "min.insync.replicas", value: strconv.Itoa(rf/2 + 1), isDefault: true, readOnly: true, kind: kmsg.ConfigTypeInt,
			doc: "acks=all answers once a majority of a partition's replicas hold the write (raft), so a topic's is RF/2+1."},
		{name: "num.partitions", value: "1", isDefault: true, readOnly: true, kind: kmsg.ConfigTypeInt,
			doc: "Partitions of a topic created without a count, as auto-create makes them."},
	}
	if ns.LogDir != "" {
		out = append(out, configEntry{name: "log.dirs", value: ns.LogDir, isDefault: false, readOnly: true, kind: kmsg.ConfigTypeList,
			doc: "The folder of this node's partition logs: one folder per partition, TOPIC-N, of segment files."})
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
				entries = topicConfigEntries(cfg)
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
			set := kmsg.ConfigSourceDynamicTopicConfig // given when the topic was created
			if res.ResourceType == kmsg.ConfigResourceTypeBroker {
				set = kmsg.ConfigSourceStaticBrokerConfig // how the lab started the node
			}
			rr.Configs = append(rr.Configs, e.wire(req.IncludeDocumentation, set))
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

// wire is the entry in a describe's answer; set is the source of a value
// that is not the default.
func (e configEntry) wire(doc bool, set kmsg.ConfigSource) kmsg.DescribeConfigsResponseResourceConfig {
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	value := e.value
	c.Name, c.Value, c.ReadOnly, c.IsDefault, c.ConfigType = e.name, &value, e.readOnly, e.isDefault, e.kind
	c.Source = set
	if e.isDefault {
		c.Source = kmsg.ConfigSourceDefaultConfig
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
