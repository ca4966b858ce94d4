package command

// The cluster commands: starting a cluster, and moving a leadership.

import "strconv"

// Cluster (re)starts an empty cluster.
type Cluster struct {
	Nodes  int
	Timing string // "fast", "classroom", or "" for the lab's default
}

func (Cluster) Name() string { return "cluster" }
func (c Cluster) String() string {
	return words("cluster").opt("nodes", strconv.Itoa(c.Nodes)).optIf(c.Timing != "", "timing", c.Timing).String()
}

func buildCluster(p *parser, _ *Spec) (Command, *posError) {
	o, err := p.options()
	if err != nil {
		return nil, err
	}
	return Cluster{Nodes: o.int("nodes", 0), Timing: o.str("timing")}, nil
}

// Elect moves the leadership of a partition or queue to a node and waits
// until that node leads.
type Elect struct {
	Node   NodeRef
	Target Target
	// Epoch, when set, is the epoch Node should lead at: leadership moves
	// round the replicas, one election each, until it is reached.
	Epoch int
}

func (Elect) Name() string { return "elect" }
func (c Elect) String() string {
	return words("elect", c.Node.String(), c.Target.String()).optIf(c.Epoch != 0, "epoch", strconv.Itoa(c.Epoch)).String()
}

func buildElect(p *parser, _ *Spec) (Command, *posError) {
	n, err := p.nodeRef()
	if err != nil {
		return nil, err
	}
	t, err := p.arg("a partition (orders/0) or queue after the node")
	if err != nil {
		return nil, err
	}
	tg, terr := parseTarget(t.text)
	if terr != nil {
		return nil, errAt(t.col, "%v", terr)
	}
	o, err := p.options()
	if err != nil {
		return nil, err
	}
	c := Elect{Node: n, Target: tg, Epoch: o.int("epoch", 0)}
	if c.Epoch != 0 && !tg.IsPartition {
		return nil, errAt(o["epoch"].col, "epoch= moves a partition's leadership round to an epoch; name a partition, like orders/0")
	}
	return c, nil
}
