package lessons

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/command"
)

// validate checks what needs the whole lesson: concepts each taught with a
// prediction and an expectation, names that exist where they are used
// (topics, partitions, nodes), and placeholders that read something.
func (p *parser) validate() {
	p.concepts()
	v := &refs{p: p, nodes: 3, topics: lab.InternalTopics(), queues: map[string]bool{}, kept: map[string]bool{}}
	for _, s := range p.les.Steps {
		for _, b := range s.Blocks {
			switch b.Kind {
			case KindText:
				v.text(b.Line, b.Text)
			case KindLab:
				v.commands(b.Commands)
			case KindTask:
				v.lines(b.src)
				// also: is another way from the same start, not a
				// sequel to do: (both may create the same topic).
				other := v.clone()
				v.commands(b.Task.Do)
				other.commands(b.Task.Also)
				v.commands(b.Task.Wait)
			case KindPredict:
				v.lines(b.src)
			case KindExpect:
				for _, e := range b.Expects {
					v.condition(e.Line, e.Cond)
				}
			}
		}
	}
}

// concepts checks that every concept has a prediction and an expectation.
// A lesson with one concept need not tag its blocks.
func (p *parser) concepts() {
	predicts, expects := map[string]int{}, map[string]int{}
	for _, s := range p.les.Steps {
		for _, b := range s.Blocks {
			if b.Kind != KindPredict && b.Kind != KindExpect {
				continue
			}
			c := b.Concept
			if c != "" && !slices.Contains(p.les.Concepts, c) {
				p.problem(b.Line, 0, "the ```%s block's concept %q is not in the front matter's concepts (%s)%s",
					b.Kind, c, strings.Join(p.les.Concepts, ", "), command.DidYouMean(c, p.les.Concepts))
				continue
			}
			if c == "" && len(p.les.Concepts) == 1 {
				c = p.les.Concepts[0]
			}
			if b.Kind == KindPredict {
				predicts[c]++
			} else {
				expects[c]++
			}
		}
	}
	if len(p.les.Steps) == 0 {
		return
	}
	line := p.conceptsLine
	if line == 0 {
		line = p.frontLine
	}
	for _, c := range p.les.Concepts {
		var missing []string
		if predicts[c] == 0 {
			missing = append(missing, "```predict")
		}
		if expects[c] == 0 {
			missing = append(missing, "```expect")
		}
		if len(missing) > 0 {
			how := ""
			if len(p.les.Concepts) > 1 {
				how = fmt.Sprintf(" (tag one with a line concept: %s)", c)
			}
			p.problem(line, 0, "concept %q is taught without a %s block%s", c, strings.Join(missing, " or a "), how)
		}
	}
}

// refs follows the lesson in order and checks each name against what the
// lesson has made by then: the cluster's nodes, its topics and the values
// placeholders kept.
type refs struct {
	p      *parser
	nodes  int
	topics map[string]int // name → partitions
	queues map[string]bool
	kept   map[string]bool
}

// clone copies what the lesson has made so far, for checking another
// way to a task's goal from the same start.
func (v *refs) clone() *refs {
	c := *v
	c.topics = maps.Clone(v.topics)
	c.queues = maps.Clone(v.queues)
	c.kept = maps.Clone(v.kept)
	return &c
}

// commands checks a block's commands in order.
func (v *refs) commands(ls []command.Line) {
	for _, c := range ls {
		v.command(c.Num, c.Cmd)
	}
}

// lines checks the placeholders of a block's source lines, each at its own
// line number.
func (v *refs) lines(ls []srcLine) {
	for _, l := range ls {
		v.text(l.num, l.text)
	}
}

func (v *refs) command(line int, c command.Command) {
	switch c := c.(type) {
	case command.Cluster:
		v.nodes = c.Nodes
		v.topics = lab.InternalTopics()
		v.queues = map[string]bool{}
	case command.QueueCreate:
		v.queues[c.Queue] = true
	case command.TopicCreate:
		if _, ok := v.topics[c.Topic]; ok {
			v.p.problem(line, 0, "topic %s is created a second time; the lab would refuse it", c.Topic)
		}
		if c.RF > v.nodes {
			v.p.problem(line, 0, "rf=%d, but the cluster has %d nodes", c.RF, v.nodes)
		}
		v.topics[c.Topic] = c.Partitions
	case command.Produce:
		if v.topic(line, c.Topic) && c.Pinned && c.Partition >= v.topics[c.Topic] {
			v.p.problem(line, 0, "partition=%d, but %s has %s", c.Partition, c.Topic, command.PartitionsText(v.topics[c.Topic]))
		}
	case command.Load:
		v.loadTarget(line, c.Topic)
	case command.Consumer:
		for _, t := range []string{c.Topic, c.RetryTopic} {
			if t != "" {
				v.topic(line, t)
			}
		}
	case command.Elect:
		v.node(line, c.Node)
		v.target(line, c.Target)
	case command.Kill:
		v.node(line, c.Node)
	case command.Crash:
		v.node(line, c.Node)
	case command.Restart:
		v.node(line, c.Node)
	case command.Isolate:
		v.node(line, c.Node)
	case command.Slow:
		v.node(line, c.Node)
	case command.Partition:
		for _, side := range c.Sides {
			for _, n := range side {
				v.node(line, n)
			}
		}
	case command.Wait:
		v.condition(line, c.Cond)
	case command.Expect:
		v.condition(line, c.Cond)
	}
}

func (v *refs) condition(line int, c command.Condition) {
	v.value(line, c.Left.Value)
	v.value(line, c.Right.Value)
}

func (v *refs) value(line int, val command.Value) {
	if val.Kind == command.ValSaved && !v.kept[val.Word] {
		v.p.problem(line, 0, "%s: no earlier placeholder keeps a value as %s; keep it first, like {{epoch(orders/0) as %s}}", val.Word, val.Word, val.Word)
		return
	}
	if val.Kind != command.ValLab {
		return
	}
	switch val.Func {
	case "leader", "epoch", "hwm", "leo", "logstart":
		v.target(line, val.Target)
		if val.Node != "" {
			v.nodeID(line, val.Node)
		}
	case "lag", "lag_seconds":
		if val.Target.IsPartition {
			v.target(line, val.Target)
		}
	}
}

func (v *refs) node(line int, n command.NodeRef) {
	if n.Kind == command.RefNode {
		v.nodeID(line, n.Node)
		return
	}
	v.target(line, n.Of)
}

func (v *refs) nodeID(line int, id string) {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "n"))
	if !strings.HasPrefix(id, "n") || err != nil || n < 1 || n > v.nodes {
		v.p.problem(line, 0, "no node %s: the cluster has n1 to n%d here", id, v.nodes)
	}
}

// target checks a partition (orders/0) the lesson has created by now. A
// bare name is a queue, which this check leaves to the lab, unless it is
// the name of a topic.
func (v *refs) target(line int, t command.Target) {
	if !t.IsPartition {
		if n, ok := v.topics[t.Name]; ok && n > 0 {
			v.p.problem(line, 0, "%s is a topic: name one of its partitions, like %s/0", t.Name, t.Name)
		}
		return
	}
	if !v.topic(line, t.Name) {
		return
	}
	if n := v.topics[t.Name]; t.Partition >= n {
		v.p.problem(line, 0, "%s has %s, not %d", t.Name, command.PartitionsText(n), t.Partition)
	}
}

func (v *refs) topic(line int, name string) bool {
	if _, ok := v.topics[name]; ok {
		return true
	}
	var names []string
	for n := range v.topics {
		if _, internal := lab.InternalTopics()[n]; !internal {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		v.p.problem(line, 0, "no topic %s yet: create it first with topic create %s partitions=1", name, name)
		return false
	}
	v.p.problem(line, 0, "no topic %s here; the lesson has created %s%s", name, strings.Join(names, ", "), command.DidYouMean(name, names))
	return false
}

// text checks the placeholders of a text whose first line is line.
func (v *refs) text(line int, text string) {
	for i, ln := range strings.Split(text, "\n") {
		v.textLine(line+i, ln)
	}
}

func (v *refs) textLine(at int, text string) {
	phs, errs := placeholders(text)
	for i, ph := range phs {
		if errs[i] != nil {
			v.p.problem(at, 0, "%v", errs[i])
			continue
		}
		if ph.recall != "" {
			if !v.kept[ph.recall] {
				v.p.problem(at, 0, "{{%s}}: no earlier placeholder keeps a value as %s, like {{lost as %s}}", ph.src, ph.recall, ph.recall)
			}
			continue
		}
		v.value(at, ph.expr.Value)
		if ph.as != "" {
			v.kept[ph.as] = true
		}
	}
	if len(phs) > 0 && errs[0] == nil && strings.TrimSpace(text[:phs[0].start]) == "" &&
		(strings.HasPrefix(text[phs[0].end:], ".") || strings.HasPrefix(text[phs[0].end:], ")")) {
		v.p.problem(at, 0, "{{%s}} starts the line and a period follows it: a value like 1 would make the line a numbered list; move it off the start of the line", phs[0].src)
	}
	if strings.Contains(placeholderRE.ReplaceAllString(text, ""), "{{") {
		v.p.problem(at, 0, "a {{ without its }} on this line: a placeholder is {{hwm(orders/0)}}")
	}
}

// loadTarget checks the topic or queue a load sends to against what the
// lesson has created by then.
func (v *refs) loadTarget(line int, name string) {
	if _, ok := v.topics[name]; ok || v.queues[name] {
		return
	}
	var names []string
	for n := range v.topics {
		if !lab.InternalName(n) {
			names = append(names, n)
		}
	}
	for n := range v.queues {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		v.p.problem(line, 0, "no topic or queue %s yet: create it first with topic create %s partitions=1 or queue create %s", name, name, name)
		return
	}
	v.p.problem(line, 0, "no topic or queue %s here; the lesson has created %s%s", name, strings.Join(names, ", "), command.DidYouMean(name, names))
}
