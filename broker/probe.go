package broker

// The broker's answers to the benchmark harness's probe
// (broker/internal/probe): reads of its insides that stay out of its API.

import (
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/internal/probe"
	"github.com/mqlab/mqlab/broker/partcmd"
)

func init() {
	probe.Of = func(c any) probe.Cluster { return clusterProbe{c.(*Cluster)} }
	probe.EncodeProduce = partcmd.EncodeProduce
	probe.Poll = poll
	probe.FastRaftConfig = func(node string) *raft.Config {
		c := &Cluster{timing: FastTiming, logger: hclog.NewNullLogger()}
		return c.raftConfig(node)
	}
}

type clusterProbe struct{ c *Cluster }

func (p clusterProbe) LeaderOf(group string) probe.Replica {
	if rep := p.c.leaderOf(group); rep != nil {
		return replicaProbe{rep}
	}
	return nil
}

func (p clusterProbe) ReplicaOn(node, group string) probe.Replica {
	if rep := p.c.replicaOn(node, group); rep != nil {
		return replicaProbe{rep}
	}
	return nil
}

func (p clusterProbe) Now() time.Time { return p.c.now() }

type replicaProbe struct{ rep *replica }

func (p replicaProbe) Raft() *raft.Raft  { return p.rep.raft() }
func (p replicaProbe) ReadyLeader() bool { return p.rep.readyLeader() }
func (p replicaProbe) LogEnd() int64     { return p.rep.logEnd() }

func (p replicaProbe) Offsets() (start, hwm int64, ok bool) {
	if p.rep.partition() == nil {
		return 0, 0, false
	}
	start, hwm, _ = p.rep.partition().state()
	return start, hwm, true
}

func (p replicaProbe) LastProduceEntrySize() int {
	logs := p.rep.disk.Logs
	last, _ := logs.LastIndex()
	first, _ := logs.FirstIndex()
	for i := last; i >= first && i > 0; i-- {
		var l raft.Log
		if logs.GetLog(i, &l) != nil || l.Type != raft.LogCommand {
			continue
		}
		if h, _, err := partcmd.DecodeHeader(l.Data); err == nil && h.Kind == partcmd.Produce {
			return len(l.Data)
		}
	}
	return 0
}
