package lab

import (
	"fmt"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/partlog"
	"github.com/mqlab/mqlab/lab/command"
)

// partitionOf reads partition_of(TOPIC, KEY): the partition a producer
// sends KEY to in TOPIC as it is now, murmur2(KEY) % its partition count,
// the rule the broker's producer uses. Two topics with different counts
// show where a key would move if one topic grew from the one count to the
// other.
func (w *world) partitionOf(v command.Value) (any, error) {
	t, err := w.topic(v.Arg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v, err)
	}
	if len(t.Partitions) == 0 {
		return nil, notNow(fmt.Errorf("%s: %s has no partitions yet", v, v.Arg))
	}
	return float64(partlog.PartitionForKey([]byte(v.Key), len(t.Partitions))), nil
}

// idleMembers counts a group's members in the current generation that own
// no partition: a group gives each partition to one member, so members
// beyond the partition count wait.
func idleMembers(gs broker.ConsumerGroupState) int {
	n := 0
	for _, m := range gs.Members {
		if m.Idle {
			n++
		}
	}
	return n
}
