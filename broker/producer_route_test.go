package broker

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// route groups a call's messages by partition, in first-appearance order,
// and fails only the messages that cannot be routed, whatever mix of one
// partition, several and failures the call holds.
func TestRouteGroupsMessagesByPartition(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 3})
	p := mustProducer(t, c, ProducerConfig{ClientID: "router", Acks: AcksAll})
	to := func(part int) Message { return Message{Topic: "orders", Pinned: true, Partition: part} }
	bad := Message{Topic: "orders", Pinned: true, Partition: 9}
	unknown := Message{Topic: "nope"}
	for _, tc := range []struct {
		msgs   []Message
		want   string // each group as partition:[indexes]
		failed []int
	}{
		{[]Message{to(1), to(1), to(1)}, "1:[0 1 2]", nil},
		{[]Message{bad, to(1), to(1)}, "1:[1 2]", []int{0}},
		{[]Message{to(2), bad, to(2), unknown}, "2:[0 2]", []int{1, 3}},
		{[]Message{to(0), bad, to(0), to(2), unknown, to(0), to(2)}, "0:[0 2 5] 2:[3 6]", []int{1, 4}},
		{[]Message{to(2), to(0), to(1), to(0)}, "2:[0] 0:[1 3] 1:[2]", nil},
		{[]Message{bad, unknown}, "", []int{0, 1}},
		{[]Message{bad, bad}, "", []int{0, 1}},
		{[]Message{unknown}, "", []int{0}},
		{[]Message{to(1), {Topic: "orders", Partition: 1}}, "1:[0] 0:[1]", nil}, // not pinned: round robin, from 0
		{nil, "", nil},
	} {
		results := make([]ProduceResult, len(tc.msgs))
		var got []string
		for _, g := range p.route(tc.msgs, results) {
			got = append(got, fmt.Sprintf("%d:%v", g.tp.Partition, g.idx))
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("%d messages: groups %q, want %q", len(tc.msgs), s, tc.want)
		}
		for i, r := range results {
			if failed := slices.Contains(tc.failed, i); failed != (r.Outcome == OutcomeFailed && r.Err != nil) {
				t.Errorf("%d messages: message %d: %v %v, want failed=%v", len(tc.msgs), i, r.Outcome, r.Err, failed)
			}
		}
	}
}
