package lessons

import (
	"context"
	"fmt"
	"strconv"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/command"
)

// readExpr reads a lab value for a placeholder, the way the lab's own
// conditions read it (lab/conditions.go): partition values from one
// snapshot of the cluster, checker fields from a check.
//
// The lab does not export its evaluator, so this mirrors it for the values
// a placeholder can show; values whose machinery has not landed (lag,
// depth, rows) say so.
func readExpr(ctx context.Context, l *lab.Lab, e command.Expr) (string, error) {
	v, err := readValue(ctx, l, e.Value)
	if err != nil {
		return "", err
	}
	if f, ok := v.(float64); ok {
		return formatNumber(f + e.Offset), nil
	}
	return fmt.Sprint(v), nil
}

func formatNumber(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func readValue(ctx context.Context, l *lab.Lab, v command.Value) (any, error) {
	switch v.Kind {
	case command.ValNumber:
		return v.Num, nil
	case command.ValWord:
		return v.Word, nil
	case command.ValField:
		rep, err := l.Check(ctx)
		if err != nil {
			return nil, err
		}
		n, ok := rep.Field(v.Word)
		if !ok {
			return nil, fmt.Errorf("the checker has no field %s", v.Word)
		}
		return float64(n), nil
	}
	snap := l.Snapshot()
	switch v.Func {
	case "leader", "epoch", "hwm", "leo", "logstart":
		return partitionValue(snap, v)
	case "state":
		for _, n := range snap.Cluster.Nodes {
			if n.ID == v.Arg {
				if n.Up {
					return "up", nil
				}
				return "down", nil
			}
		}
		for _, ld := range snap.Loads {
			if ld.Client == v.Arg {
				if ld.State == lab.LoadStopped {
					return lab.LoadStopped, nil
				}
				return "up", nil
			}
		}
		for _, c := range snap.Clients {
			if c.Name == v.Arg {
				return "up", nil
			}
		}
		return nil, fmt.Errorf("state(%s): no node or client by that name", v.Arg)
	}
	return nil, fmt.Errorf("%s: a placeholder cannot show this value yet", v)
}

// partitionValue reads leader, epoch, hwm, leo or logstart. It names no
// broker type: the lessons package reads the cluster through lab snapshots.
func partitionValue(s lab.Snapshot, v command.Value) (any, error) {
	if !v.Target.IsPartition {
		return nil, fmt.Errorf("%s: name a partition, like orders/0", v)
	}
	for _, t := range s.Cluster.Topics {
		if t.Config.Name != v.Target.Name {
			continue
		}
		for _, p := range t.Partitions {
			if p.Partition != v.Target.Partition {
				continue
			}
			if v.Func == "leader" {
				if p.Leader == "" {
					return "none", nil
				}
				return p.Leader, nil
			}
			if v.Func == "epoch" && v.Node == "" {
				if p.Epoch == 0 {
					return nil, fmt.Errorf("%s: no replica is up", v)
				}
				return float64(p.Epoch), nil
			}
			best, found := 0.0, false
			for _, r := range p.Replicas {
				if v.Node != "" && r.Node != v.Node || v.Node == "" && p.Leader != "" && r.Node != p.Leader {
					continue
				}
				if !r.Up {
					if v.Node != "" {
						return nil, fmt.Errorf("%s: %s is down", v, v.Node)
					}
					continue
				}
				var f float64
				switch v.Func {
				case "epoch":
					f = float64(r.Epoch)
				case "hwm":
					f = float64(r.HighWatermark)
				case "leo":
					f = float64(r.LogEnd)
				case "logstart":
					f = float64(r.LogStart)
				}
				if !found || f > best {
					best, found = f, true
				}
			}
			if !found {
				if v.Node != "" {
					return nil, fmt.Errorf("%s: %s holds no replica of it", v, v.Node)
				}
				return nil, fmt.Errorf("%s: no replica is up", v)
			}
			return best, nil
		}
	}
	return nil, fmt.Errorf("%s: no such partition", v)
}
