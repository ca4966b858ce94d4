package kafkawire

// Consumer groups: Kafka's classic protocol, with the assignment computed
// by the group's leader member and carried by its SyncGroup.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/groupcoord"
)

func handleFindCoordinator(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	resp.NodeID = -1
	if req.CoordinatorType != 0 {
		resp.ErrorCode = codeInvalidRequest
		resp.ErrorMessage = errText(errors.New("mqlab has no transactions, so no transaction coordinator"))
		return resp, nil
	}
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	node, err := r.front().Group(req.CoordinatorKey).FindCoordinator(ctx)
	if ferr := r.netErr(err); ferr != nil {
		return nil, ferr
	}
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = groupCode(err), errText(err)
		return resp, nil
	}
	resp.NodeID = r.cn.s.brokerID(node)
	resp.Host, resp.Port = r.cn.s.hostPort(node)
	return resp, nil
}

// groupCtx bounds a group request that may wait for a rebalance.
func (r *request) groupCtx(wait time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.ctx, max(wait, 30*time.Second)+5*time.Second)
}

func handleJoinGroup(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.JoinGroupRequest)
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.Generation = -1
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	rebalance := session
	if r.version >= 1 {
		rebalance = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	if session <= 0 || rebalance <= 0 {
		resp.ErrorCode = codeInvalidSessionTimeout
		return resp, nil
	}
	join := broker.GroupJoin{Group: req.Group, MemberID: req.MemberID, ClientID: r.client, SessionTimeout: session,
		ProtocolType: req.ProtocolType, RebalanceTimeout: rebalance}
	if join.ClientID == "" {
		join.ClientID = "client"
	}
	if join.ProtocolType == "" {
		resp.ErrorCode = codeInconsistentGroupProto
		return resp, nil
	}
	for _, p := range req.Protocols {
		join.Protocols = append(join.Protocols, broker.GroupProtocol{Name: p.Name, Metadata: p.Metadata})
		if join.Topics == nil && req.ProtocolType == "consumer" {
			join.Topics = subscribedTopics(p.Metadata)
		}
	}
	ctx, cancel := r.groupCtx(rebalance)
	defer cancel()
	ans, err := r.front().Group(req.Group).Join(ctx, join)
	if ferr := r.netErr(err); ferr != nil {
		return nil, ferr
	}
	if err != nil {
		resp.ErrorCode = groupCode(err)
		if errors.Is(err, broker.ErrInvalid) && groupcoord.ValidateGroupName(req.Group) == nil {
			resp.ErrorCode = codeInconsistentGroupProto
		}
		r.cn.report(fmt.Sprintf("could not join group %s: %v", req.Group, err))
		return resp, nil
	}
	r.cn.s.memberJoined(r.cn, req.Group, ans.MemberID, r.client, ans.Generation, session)
	resp.Generation, resp.MemberID, resp.LeaderID = int32(ans.Generation), ans.MemberID, ans.Leader
	pt, proto := req.ProtocolType, ans.Protocol
	resp.ProtocolType, resp.Protocol = &pt, &proto
	for _, m := range ans.Members {
		rm := kmsg.NewJoinGroupResponseMember()
		rm.MemberID, rm.ProtocolMetadata = m.ID, m.Metadata
		resp.Members = append(resp.Members, rm)
	}
	return resp, nil
}

func handleSyncGroup(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.SyncGroupRequest)
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	var assign map[string]broker.GroupAssignment
	if len(req.GroupAssignment) > 0 {
		assign = map[string]broker.GroupAssignment{}
		for _, a := range req.GroupAssignment {
			ga := broker.GroupAssignment{Data: a.MemberAssignment}
			var ca kmsg.ConsumerMemberAssignment
			if ca.ReadFrom(a.MemberAssignment) == nil {
				for _, t := range ca.Topics {
					for _, p := range t.Partitions {
						ga.Partitions = append(ga.Partitions, groupcoord.TopicPartition{Topic: t.Topic, Partition: int(p)})
					}
				}
			}
			assign[a.MemberID] = ga
		}
	}
	ctx, cancel := r.groupCtx(0)
	defer cancel()
	data, err := r.front().Group(req.Group).Sync(ctx, req.MemberID, int(req.Generation), assign)
	if ferr := r.netErr(err); ferr != nil {
		return nil, ferr
	}
	resp.ErrorCode = groupCode(err)
	r.answered("sync in group "+req.Group, resp.ErrorCode, err)
	if err == nil {
		r.cn.s.memberSynced(r.cn, req.Group, req.MemberID, int(req.Generation), data)
		resp.MemberAssignment = data
		resp.ProtocolType, resp.Protocol = req.ProtocolType, req.Protocol
	}
	return resp, nil
}

func handleHeartbeat(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.HeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	ctx, cancel := r.groupCtx(0)
	defer cancel()
	err := r.front().Group(req.Group).Heartbeat(ctx, req.MemberID, int(req.Generation))
	if ferr := r.netErr(err); ferr != nil {
		return nil, ferr
	}
	resp.ErrorCode = groupCode(err)
	if err == nil {
		r.cn.s.memberSeen(r.cn, req.Group, req.MemberID)
	}
	return resp, nil
}

func handleLeaveGroup(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.LeaveGroupRequest)
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	ctx, cancel := r.groupCtx(0)
	defer cancel()
	members := []string{req.MemberID}
	if r.version >= 3 {
		members = members[:0]
		for _, m := range req.Members {
			members = append(members, m.MemberID)
		}
	}
	for _, id := range members {
		err := r.front().Group(req.Group).Leave(ctx, id)
		if ferr := r.netErr(err); ferr != nil {
			return nil, ferr
		}
		if err == nil {
			r.cn.s.memberLeft(req.Group, id)
		}
		if r.version >= 3 {
			m := kmsg.NewLeaveGroupResponseMember()
			m.MemberID, m.ErrorCode = id, groupCode(err)
			resp.Members = append(resp.Members, m)
		} else {
			resp.ErrorCode = groupCode(err)
		}
	}
	return resp, nil
}

func handleOffsetCommit(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.OffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	offsets := map[broker.TopicPartition]int64{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			offsets[broker.TopicPartition{Topic: t.Topic, Partition: int(p.Partition)}] = p.Offset
		}
	}
	generation := int(req.Generation)
	if r.version == 0 {
		generation = -1 // version 0 carries no member
	}
	ctx, cancel := r.groupCtx(0)
	defer cancel()
	var err error
	if len(offsets) > 0 {
		err = r.front().Group(req.Group).Commit(ctx, req.MemberID, generation, offsets)
		if ferr := r.netErr(err); ferr != nil {
			return nil, ferr
		}
	}
	ec := groupCode(err)
	if errors.Is(err, broker.ErrInvalid) && groupcoord.ValidateGroupName(req.Group) == nil {
		ec = codeInvalidRequest // a negative offset, say
	}
	r.answered("commit to group "+req.Group, ec, err)
	if err == nil && len(offsets) > 0 {
		r.observeCommit(req.Group, req.MemberID, generation, offsets)
	}
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, ec
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func handleOffsetFetch(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.OffsetFetchRequest)
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	var tps []broker.TopicPartition // nil: every partition the group has
	if req.Topics != nil || r.version < 2 {
		tps = []broker.TopicPartition{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, broker.TopicPartition{Topic: t.Topic, Partition: int(p)})
			}
		}
	}
	ctx, cancel := r.groupCtx(0)
	defer cancel()
	got, err := r.front().Group(req.Group).Committed(ctx, tps)
	if ferr := r.netErr(err); ferr != nil {
		return nil, ferr
	}
	ec := groupCode(err)
	resp.ErrorCode = ec
	if tps == nil {
		for tp := range got {
			tps = append(tps, tp)
		}
	}
	byTopic := map[string]int{}
	for _, tp := range tps {
		i, ok := byTopic[tp.Topic]
		if !ok {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = tp.Topic
			resp.Topics = append(resp.Topics, rt)
			i = len(resp.Topics) - 1
			byTopic[tp.Topic] = i
		}
		rp := kmsg.NewOffsetFetchResponseTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = int32(tp.Partition), -1, -1, ec
		if off, ok := got[tp]; ok && err == nil {
			rp.Offset = off
		}
		empty := ""
		rp.Metadata = &empty
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	return resp, nil
}

// kafkaState is how Kafka names a group's state.
func kafkaState(g broker.GroupDescription, ok bool) string {
	if !ok {
		return "Dead"
	}
	switch g.State {
	case groupcoord.PreparingRebalance:
		return "PreparingRebalance"
	case groupcoord.CompletingRebalance:
		return "CompletingRebalance"
	case groupcoord.Stable:
		return "Stable"
	}
	return "Empty"
}

func handleDescribeGroups(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.DescribeGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	ctx, cancel := r.groupCtx(0)
	defer cancel()
	for _, name := range req.Groups {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group = name
		g, ok, err := r.front().Group(name).Describe(ctx)
		if ferr := r.netErr(err); ferr != nil {
			return nil, ferr
		}
		rg.ErrorCode = groupCode(err)
		rg.State = kafkaState(g, ok)
		if ok {
			rg.ProtocolType, rg.Protocol = g.ProtocolType, string(g.Strategy)
			if rg.ProtocolType == "" {
				rg.ProtocolType = "consumer"
			}
			for _, m := range g.Members {
				rm := kmsg.NewDescribeGroupsResponseGroupMember()
				rm.MemberID, rm.ClientID, rm.ClientHost = m.ID, m.ClientID, "/127.0.0.1"
				var ca kmsg.ConsumerMemberAssignment
				for _, tp := range m.Assignment {
					at := len(ca.Topics) - 1
					if at < 0 || ca.Topics[at].Topic != tp.Topic {
						ca.Topics = append(ca.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: tp.Topic})
						at++
					}
					ca.Topics[at].Partitions = append(ca.Topics[at].Partitions, int32(tp.Partition))
				}
				rm.MemberAssignment = ca.AppendTo(nil)
				rg.Members = append(rg.Members, rm)
			}
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}

func handleListGroups(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.ListGroupsRequest)
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	ctx, cancel := r.groupCtx(0)
	defer cancel()
	groups, err := r.front().ListGroups(ctx)
	if ferr := r.netErr(err); ferr != nil {
		return nil, ferr
	}
	resp.ErrorCode = code(err)
	for _, g := range groups {
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState = g.ID, g.ProtocolType, kafkaState(g, true)
		if lg.ProtocolType == "" {
			lg.ProtocolType = "consumer"
		}
		resp.Groups = append(resp.Groups, lg)
	}
	return resp, nil
}

// subscribedTopics reads the topics of a consumer protocol's member
// metadata, nil when it does not parse. Some clients (kafka-go) label
// their metadata version 1 but end it after the user data, without the
// owned partitions version 1 adds; the topics come first in every
// version, so such metadata is read again as version 0.
func subscribedTopics(meta []byte) []string {
	var md kmsg.ConsumerMemberMetadata
	if md.ReadFrom(meta) == nil {
		return md.Topics
	}
	if len(meta) < 2 {
		return nil
	}
	v0 := append([]byte{0, 0}, meta[2:]...)
	if md.ReadFrom(v0) == nil {
		return md.Topics
	}
	return nil
}
