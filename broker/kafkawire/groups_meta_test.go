package kafkawire

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A member's subscribed topics are read from its protocol metadata in
// every version, also from kafka-go's version 1 that stops after the user
// data.
func TestSubscribedTopics(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	full := kmsg.NewConsumerMemberMetadata()
	full.Version = 1
	full.Topics = []string{"orders", "payments"}
	full.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: "orders", Partitions: []int32{0}}}
	v0 := kmsg.NewConsumerMemberMetadata()
	v0.Topics = []string{"orders"}
	// kafka-go's: version 1, topics, user data, and nothing after.
	short := v0.AppendTo(nil)
	short[1] = 1
	for _, c := range []struct {
		name string
		meta []byte
		want []string
	}{
		{"version 1 with owned partitions", full.AppendTo(nil), []string{"orders", "payments"}},
		{"version 0", v0.AppendTo(nil), []string{"orders"}},
		{"version 1 without owned partitions", short, []string{"orders"}},
		{"garbage", []byte{0, 1, 0xff}, nil},
		{"empty", nil, nil},
	} {
		if got := subscribedTopics(c.meta); !slices.Equal(got, c.want) {
			t.Errorf("%s: topics %q; want %q", c.name, got, c.want)
		}
	}
}
