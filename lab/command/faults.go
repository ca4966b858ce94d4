package command

// The fault commands: what breaks a node, its links or a client's
// messages, and what mends them.

import (
	"fmt"
	"strings"
	"time"
)

// Kill stops a node as if its process died.
type Kill struct{ Node NodeRef }

func (Kill) Name() string     { return "kill" }
func (c Kill) String() string { return "kill " + c.Node.String() }

// Restart brings a killed node back from its disk.
type Restart struct{ Node NodeRef }

func (Restart) Name() string     { return "restart" }
func (c Restart) String() string { return "restart " + c.Node.String() }

// Isolate cuts every link of a node, to peers and clients.
type Isolate struct{ Node NodeRef }

func (Isolate) Name() string     { return "isolate" }
func (c Isolate) String() string { return "isolate " + c.Node.String() }

// buildNode builds a command that takes one node and nothing else: kill,
// restart, isolate.
func buildNode(make func(NodeRef) Command) func(*parser, *Spec) (Command, *posError) {
	return func(p *parser, _ *Spec) (Command, *posError) {
		n, err := p.nodeRef()
		if err != nil {
			return nil, err
		}
		return make(n), p.done()
	}
}

// Crash kills a node in the middle of a write: each of its partition
// replicas' last batch is left half written in its segment file (Torn,
// the only kind of crash so far).
type Crash struct {
	Node NodeRef
	Torn bool
}

func (Crash) Name() string     { return "crash" }
func (c Crash) String() string { return "crash " + c.Node.String() + " torn" }

func buildCrash(p *parser, s *Spec) (Command, *posError) {
	n, err := p.nodeRef()
	if err != nil {
		return nil, err
	}
	if err := p.keyword("torn", "expected \"torn\" after the node%s: the crash that tears the last write; %s"); err != nil {
		return nil, err
	}
	return Crash{Node: n, Torn: true}, p.done()
}

// Partition cuts the node-to-node links between two or more sides.
type Partition struct{ Sides [][]NodeRef }

func (Partition) Name() string { return "partition" }
func (c Partition) String() string {
	sides := make([]string, len(c.Sides))
	for i, side := range c.Sides {
		refs := make([]string, len(side))
		for j, r := range side {
			refs[j] = r.String()
		}
		sides[i] = strings.Join(refs, ",")
	}
	return "partition " + strings.Join(sides, " | ")
}

func buildPartition(p *parser, _ *Spec) (Command, *posError) {
	var sides [][]NodeRef
	seen := map[string]bool{}
	expectSide := true
	for ; p.pos < len(p.toks); p.pos++ {
		t := p.toks[p.pos]
		if t.kind == tPipe {
			if expectSide {
				return nil, errAt(t.col, "a side is empty before this \"|\"; %s", p.usageHint())
			}
			expectSide = true
			continue
		}
		if !expectSide {
			return nil, errAt(t.col, "expected \"|\" between sides, not %q; list the nodes of one side with commas: n2,n3", t.text)
		}
		if t.kind != tWord || t.isOption() {
			return nil, errAt(t.col, "expected nodes, not %q; %s", t.text, p.usageHint())
		}
		var side []NodeRef
		col := t.col
		for _, part := range splitOutsideParens(t.text) {
			ref, err := parseNodeRef(token{kind: tWord, text: part, col: col})
			if part == "" {
				err = errAt(col, "an empty node name between commas")
			}
			if err != nil {
				return nil, err
			}
			if seen[ref.String()] {
				return nil, errAt(col, "%s is on two sides", ref)
			}
			seen[ref.String()] = true
			side = append(side, ref)
			col += len([]rune(part)) + 1
		}
		sides = append(sides, side)
		expectSide = false
	}
	if expectSide && len(sides) > 0 {
		return nil, errAt(p.end, "the side after the last \"|\" is empty; %s", p.usageHint())
	}
	if len(sides) < 2 {
		return nil, errAt(p.end, "partition needs at least two sides; %s", p.usageHint())
	}
	return Partition{Sides: sides}, nil
}

// splitOutsideParens splits on commas that are not inside parentheses.
func splitOutsideParens(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// Slow adds latency to every message to or from a node; 0 removes it.
type Slow struct {
	Node    NodeRef
	Latency time.Duration
}

func (Slow) Name() string { return "slow" }
func (c Slow) String() string {
	d := "off"
	if c.Latency != 0 {
		d = formatDuration(c.Latency)
	}
	return words("slow", c.Node.String(), d).String()
}

func buildSlow(p *parser, _ *Spec) (Command, *posError) {
	n, err := p.nodeRef()
	if err != nil {
		return nil, err
	}
	t, err := p.arg("a latency (200ms) or off")
	if err != nil {
		return nil, err
	}
	c := Slow{Node: n}
	if t.text != "off" {
		d, derr := parseDuration(t.text)
		if derr != nil || d < 0 || d > 60e9 {
			return nil, errAt(t.col, "%q is not a latency; write a duration up to 60s like 200ms, or off", t.text).withSuggest(nearest(t.text, []string{"off"}))
		}
		c.Latency = d
	}
	return c, p.done()
}

// Heal restores every link and removes every latency.
type Heal struct{}

func (Heal) Name() string   { return "heal" }
func (Heal) String() string { return "heal" }

// DropReply makes the broker do a client's next data request but lose the reply.
type DropReply struct{ Client string }

func (DropReply) Name() string     { return "drop next reply" }
func (c DropReply) String() string { return "drop next reply to " + c.Client }

// DropAck loses a client's next ack, delete or offset commit.
type DropAck struct{ Client string }

func (DropAck) Name() string     { return "drop next ack" }
func (c DropAck) String() string { return "drop next ack from " + c.Client }

func buildDrop(keyword string, make func(string) Command) func(*parser, *Spec) (Command, *posError) {
	return func(p *parser, s *Spec) (Command, *posError) {
		if err := p.keyword(keyword, fmt.Sprintf("expected %q after %q", keyword, s.Name)+"%s; %s"); err != nil {
			return nil, err
		}
		client, err := p.name("a client")
		if err != nil {
			return nil, err
		}
		return make(client), p.done()
	}
}

// NodeOf returns the node a command acts on (kill, restart, isolate,
// slow, elect), as written.
func NodeOf(c Command) (NodeRef, bool) {
	switch c := c.(type) {
	case Kill:
		return c.Node, true
	case Crash:
		return c.Node, true
	case Restart:
		return c.Node, true
	case Isolate:
		return c.Node, true
	case Slow:
		return c.Node, true
	case Elect:
		return c.Node, true
	}
	return NodeRef{}, false
}
