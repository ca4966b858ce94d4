package kafkawire

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// nodeState is a Broker whose one node is up or down; netErr asks no more.
type nodeState struct {
	Broker
	up bool
}

func (b nodeState) NodeUp(string) bool { return b.up }

// A request that fails because its node was killed under it gets no
// answer: the connection ends, as a dead broker's does. An error code
// instead reaches a consumer's application (librdkafka hands a fetch's
// REQUEST_TIMED_OUT to it, and kcat exits on it). A node that is up and
// cut off answers later; a lost request or reply breaks the connection
// either way; other errors are answered.
func TestNetErrWhenTheNodeIsDown(t *testing.T) {
	t.Parallel()
	at := func(up bool) *request {
		return &request{cn: &conn{s: &Server{c: nodeState{up: up}}, node: "n1"}}
	}
	for _, c := range []struct {
		up   bool
		err  error
		want error // nil: answered with the error's code
	}{
		{false, raftnet.ErrUnreachable, errNodeDown},
		{false, broker.ErrClosed, errNodeDown},
		{false, broker.ErrNotLeader, errNodeDown},
		{false, raftnet.ErrReplyLost, errLost},
		{true, raftnet.ErrUnreachable, errUnanswered},
		{true, raftnet.ErrRequestLost, errLost},
		{true, broker.ErrNotLeader, nil},
		{true, broker.ErrClosed, nil},
	} {
		err := fmt.Errorf("fetch orders/0: %w", c.err)
		got := at(c.up).netErr(err)
		if c.want == nil && got != nil || c.want != nil && !errors.Is(got, c.want) {
			t.Errorf("node up %v, %v: netErr gave %v; want %v", c.up, c.err, got, c.want)
		}
	}
	if got := at(false).netErr(nil); got != nil {
		t.Errorf("no error on a node that is down: netErr gave %v", got)
	}
}
