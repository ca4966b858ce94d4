package kafkawire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
)

// clusterID is what metadata answers name the cluster.
const clusterID = "mqlab"

func (s *Server) brokerID(node string) int32 {
	if id, ok := s.index[node]; ok {
		return id
	}
	return -1
}

func (s *Server) hostPort(node string) (string, int32) {
	host, port, _ := net.SplitHostPort(s.Addr(node))
	p, _ := strconv.Atoi(port)
	return host, int32(p)
}

func (s *Server) ids(nodes []string) []int32 {
	out := make([]int32, len(nodes))
	for i, n := range nodes {
		out[i] = s.brokerID(n)
	}
	return out
}

func handleMetadata(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.MetadataRequest)
	s := r.cn.s
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	var topics []string                                              // nil: all
	if req.Topics != nil && (r.version > 0 || len(req.Topics) > 0) { // in version 0, an empty list means all
		topics = []string{}
		for _, t := range req.Topics {
			if t.Topic != nil {
				topics = append(topics, *t.Topic)
			}
		}
	}
	md, err := r.front().Metadata(ctx, topics)
	if ferr := r.netErr(err); ferr != nil {
		return nil, ferr
	}
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	if topics != nil && s.cfg.AutoCreate && (r.version < 4 || req.AllowAutoTopicCreation) {
		if created := r.autoCreate(ctx, topics, md); created {
			if md, err = r.front().Metadata(ctx, topics); err != nil {
				return nil, r.netErr(err)
			}
		}
	}
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	id := clusterID
	resp.ClusterID = &id
	resp.ControllerID = s.brokerID(md.Controller)
	for _, n := range md.Nodes {
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID = s.brokerID(n)
		b.Host, b.Port = s.hostPort(n)
		resp.Brokers = append(resp.Brokers, b)
	}
	known := map[string]bool{}
	for _, t := range md.Topics {
		known[t.Name] = true
		rt := kmsg.NewMetadataResponseTopic()
		name := t.Name
		rt.Topic, rt.IsInternal = &name, t.Internal
		for _, p := range t.Partitions {
			rp := kmsg.NewMetadataResponseTopicPartition()
			rp.Partition = int32(p.Partition)
			rp.Leader, rp.LeaderEpoch = -1, -1
			if p.Leader != "" {
				rp.Leader, rp.LeaderEpoch = s.brokerID(p.Leader), int32(p.Epoch)
			} else {
				rp.ErrorCode = codeLeaderNotAvailable
			}
			rp.Replicas, rp.ISR = s.ids(p.Replicas), s.ids(p.InSync)
			for _, n := range p.Replicas {
				if !s.c.NodeUp(n) {
					rp.OfflineReplicas = append(rp.OfflineReplicas, s.brokerID(n))
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	for _, name := range topics {
		if !known[name] {
			rt := kmsg.NewMetadataResponseTopic()
			n := name
			rt.Topic, rt.ErrorCode = &n, codeUnknownTopicOrPartition
			resp.Topics = append(resp.Topics, rt)
		}
	}
	return resp, nil
}

// autoCreate creates the topics a metadata request names that do not
// exist yet, with one partition and the default replication.
func (r *request) autoCreate(ctx context.Context, topics []string, md broker.ClusterMetadata) bool {
	have := map[string]bool{}
	for _, t := range md.Topics {
		have[t.Name] = true
	}
	created := false
	for _, name := range topics {
		if have[name] || broker.IsInternalTopic(name) {
			continue
		}
		err := r.front().CreateTopic(ctx, broker.TopicConfig{Name: name, Partitions: 1})
		if err == nil {
			created = true
			r.cn.report(fmt.Sprintf("named topic %s, which did not exist: created with 1 partition (auto-create is on)", name))
		}
	}
	return created
}

func handleListOffsets(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.ListOffsetsRequest)
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			tp := broker.TopicPartition{Topic: t.Topic, Partition: int(p.Partition)}
			at := p.Timestamp
			if at < broker.OffsetEarliest {
				rp.ErrorCode = codeInvalidRequest // -3 (max timestamp) and below: not served
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			off, epoch, err := r.front().Partition(tp).ListOffset(ctx, at, p.CurrentLeaderEpoch)
			if ferr := r.netErr(err); ferr != nil {
				return nil, ferr
			}
			rp.ErrorCode = code(err)
			if err == nil {
				rp.Offset, rp.LeaderEpoch, rp.Timestamp = off, int32(epoch), -1
				if r.version == 0 {
					rp.OldStyleOffsets = []int64{off}
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// topicConfigs applies a CreateTopics request's configs to cfg: the
// topic configs the lab has, by their Kafka names.
func topicConfigs(cfg *broker.TopicConfig, configs []kmsg.CreateTopicsRequestTopicConfig) error {
	for _, c := range configs {
		if c.Value == nil {
			continue // null: the default
		}
		v := *c.Value
		ms := func() (time.Duration, error) {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("config %s=%q: want milliseconds, a whole number ≥ 0", c.Name, v)
			}
			return time.Duration(n) * time.Millisecond, nil
		}
		var err error
		switch c.Name {
		case "cleanup.policy":
			cfg.Cleanup, err = broker.NormalizeCleanup(v)
		case "delete.retention.ms":
			cfg.DeleteRetention, err = ms()
		case "retention.ms":
			// Kafka's -1 is "keep forever", the lab's 0.
			if v != "-1" {
				cfg.RetentionAge, err = ms()
			}
		case "segment.ms":
			cfg.SegmentAge, err = ms()
		case "segment.bytes", "retention.bytes":
			n, perr := strconv.ParseInt(v, 10, 64)
			switch {
			case c.Name == "retention.bytes" && v == "-1":
			case perr != nil || n <= 0:
				err = fmt.Errorf("config %s=%q: want a size in bytes, a whole number > 0", c.Name, v)
			case c.Name == "segment.bytes":
				cfg.SegmentBytes = n
			default:
				cfg.RetentionBytes = n
			}
		case "min.cleanable.dirty.ratio":
			f, perr := strconv.ParseFloat(v, 64)
			if perr != nil || f < 0 || f > 1 {
				err = fmt.Errorf("config %s=%q: want a share from 0 to 1", c.Name, v)
			}
			cfg.DirtyRatio = f
		default:
			err = fmt.Errorf("config %q is not one mqlab has; it understands cleanup.policy, delete.retention.ms, min.cleanable.dirty.ratio, retention.ms, retention.bytes, segment.ms and segment.bytes", c.Name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func handleCreateTopics(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.CreateTopicsRequest)
	ctx, cancel := context.WithTimeout(r.ctx, requestTimeout(req.TimeoutMillis, 30*time.Second))
	defer cancel()
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		cfg := broker.TopicConfig{Name: t.Topic, Partitions: int(t.NumPartitions), RF: int(t.ReplicationFactor)}
		if cfg.Partitions < 0 {
			cfg.Partitions = 1
		}
		if cfg.RF < 0 {
			cfg.RF = 0
		}
		err := topicConfigs(&cfg, t.Configs)
		switch {
		case err != nil:
			rt.ErrorCode = codeInvalidConfig
		case len(t.ReplicaAssignment) > 0:
			rt.ErrorCode = codeInvalidRequest
			err = errors.New("mqlab places replicas itself; leave out the replica assignment")
		case broker.IsInternalTopic(t.Topic):
			rt.ErrorCode = codeInvalidTopic
			err = fmt.Errorf("topic names starting with __ are the broker's own")
		case req.ValidateOnly:
		default:
			err = r.front().CreateTopic(ctx, cfg)
			if ferr := r.netErr(err); ferr != nil {
				return nil, ferr
			}
			rt.ErrorCode = code(err)
			if errors.Is(err, broker.ErrInvalidConfig) {
				rt.ErrorCode = codeInvalidConfig
			} else if errors.Is(err, broker.ErrInvalid) {
				rt.ErrorCode = codeInvalidPartitions
				if cfg.Partitions >= 1 && cfg.Partitions <= broker.MaxPartitions {
					rt.ErrorCode = codeInvalidReplicationFactor
				}
			}
		}
		rt.ErrorMessage = errText(err)
		rt.NumPartitions, rt.ReplicationFactor = int32(cfg.Partitions), int16(cfg.RF)
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
