package kafkawire

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// api is one request kind the nodes serve: the versions they advertise
// and the handler.
type api struct {
	min, max int16
	handle   func(*request, kmsg.Request) (kmsg.Response, error)
}

const apiVersionsKey = 18

// apis is what the nodes serve, by request key. librdkafka (Debian's 2.0.2
// among others) turns group consumption off unless the group APIs'
// advertised ranges start at 0, so they start there.
var apis map[int16]api

func init() {
	apis = map[int16]api{
		0:  {3, 9, handleProduce},
		1:  {4, 12, handleFetch},
		2:  {1, 5, handleListOffsets},
		3:  {0, 9, handleMetadata},
		8:  {0, 8, handleOffsetCommit},
		9:  {0, 7, handleOffsetFetch},
		10: {0, 3, handleFindCoordinator},
		11: {0, 7, handleJoinGroup},
		12: {0, 4, handleHeartbeat},
		13: {0, 4, handleLeaveGroup},
		14: {0, 5, handleSyncGroup},
		15: {0, 5, handleDescribeGroups},
		16: {0, 4, handleListGroups},
		18: {0, 3, handleAPIVersions},
		19: {0, 5, handleCreateTopics},
		22: {0, 4, handleInitProducerID},
		32: {0, 4, handleDescribeConfigs},
		33: {0, 2, handleAlterConfigs},
		44: {0, 1, handleIncrementalAlterConfigs},
	}
}

func apiKeys() []kmsg.ApiVersionsResponseApiKey {
	out := make([]kmsg.ApiVersionsResponseApiKey, 0, len(apis))
	for key := int16(0); key <= 100; key++ {
		if a, ok := apis[key]; ok {
			k := kmsg.NewApiVersionsResponseApiKey()
			k.ApiKey, k.MinVersion, k.MaxVersion = key, a.min, a.max
			out = append(out, k)
		}
	}
	return out
}

// unsupportedVersions answers an ApiVersions of a version the node does
// not know, as Kafka does: in version 0, with the versions it serves, so
// the client can ask again in one of them.
func unsupportedVersions() kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	resp.ErrorCode = codeUnsupportedVersion
	resp.ApiKeys = apiKeys()
	return resp
}

func handleAPIVersions(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.ApiVersionsRequest)
	if req.ClientSoftwareName != "" && r.client != "" {
		sw := req.ClientSoftwareName + " " + req.ClientSoftwareVersion
		if r.cn.s.noteSoftware(r.client, sw) {
			r.cn.report("connected (" + sw + ")")
		}
	}
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	resp.ApiKeys = apiKeys()
	return resp, nil
}
