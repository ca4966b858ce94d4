package command

import (
	"path"
	"strconv"
	"strings"
)

// Builders: each reads its command's arguments and options from the parser
// and checks what one option alone cannot.

func buildTopicCreate(p *parser, _ *Spec) (Command, *posError) {
	name, o, err := p.nameThenOptions("a topic name")
	if err != nil {
		return nil, err
	}
	c := TopicCreate{Topic: name, Partitions: o.int("partitions", 0), RF: o.int("rf", 0)}
	c.Segment, _ = o["segment"].v.(Amount)
	c.Retention, _ = o["retention"].v.(Amount)
	c.Cleanup, c.DeleteRetention, c.Cleaner = o.str("cleanup"), o.dur("delete-retention"), o.str("cleaner")
	compacted := c.Cleanup == "compact" || c.Cleanup == "compact,delete"
	for _, k := range []string{"delete-retention", "cleaner"} {
		if o.has(k) && !compacted {
			return nil, errAt(o[k].col, "%s= applies to a compacted topic; add cleanup=compact (or cleanup=compact,delete)", k)
		}
	}
	if c.Cleanup == "compact" && o.has("retention") {
		return nil, errAt(o["retention"].col, "with cleanup=compact nothing is deleted by age or size; write cleanup=compact,delete to have both")
	}
	return c, nil
}

func buildCompact(p *parser, _ *Spec) (Command, *posError) {
	t, err := p.arg("a partition, like accounts/0")
	if err != nil {
		return nil, err
	}
	tg, terr := parseTarget(t.text)
	if terr != nil || !tg.IsPartition {
		return nil, errAt(t.col, "compact needs a partition, written TOPIC/N like accounts/0, not %q", t.text)
	}
	return Compact{Partition: tg}, p.done()
}

func buildBare(c Command) func(*parser, *Spec) (Command, *posError) {
	return func(p *parser, _ *Spec) (Command, *posError) { return c, p.done() }
}

func buildCheck(p *parser, _ *Spec) (Command, *posError) {
	t, ok := p.peek()
	if !ok {
		return Check{}, nil
	}
	if t.kind != tWord || t.quoted || t.text != "why" {
		return nil, errAt(t.col, "check takes nothing, or why and a count's name, not %q; e.g. check why order_violations", t.text).withSuggest(nearest(t.text, []string{"why"}))
	}
	p.pos++
	t, ok = p.peek()
	if !ok {
		return Check{Why: true}, nil
	}
	if t.kind != tWord || t.quoted || !contains(checkerFields, t.text) {
		return nil, errAt(t.col, "%q is not one of the checker's counts; write one of %s", t.text, strings.Join(checkerFields, ", ")).withSuggest(nearest(t.text, checkerFields))
	}
	p.pos++
	return Check{Why: true, Field: t.text}, p.done()
}

func buildWait(p *parser, _ *Spec) (Command, *posError) {
	cond, err := p.parseCondition("wait")
	if err != nil {
		return nil, err
	}
	o, err := p.options()
	if err != nil {
		return nil, err
	}
	c := Wait{Cond: cond, Timeout: DefaultWaitTimeout}
	if o.has("timeout") {
		c.Timeout = o.dur("timeout")
	}
	return c, nil
}

func buildExpect(p *parser, _ *Spec) (Command, *posError) {
	cond, err := p.parseCondition("expect")
	if err != nil {
		return nil, err
	}
	return Expect{Cond: cond}, p.done()
}

func buildHelp(p *parser, _ *Spec) (Command, *posError) {
	if p.pos >= len(p.toks) {
		return Help{}, nil
	}
	var ws []string
	col := p.toks[p.pos].col
	for ; p.pos < len(p.toks); p.pos++ {
		t := p.toks[p.pos]
		if t.kind != tWord || t.quoted || t.isOption() {
			return nil, errAt(t.col, "help takes a command's name, not %q", t.text)
		}
		ws = append(ws, t.text)
	}
	topic := strings.Join(ws, " ")
	if _, ok := Lookup(topic); !ok {
		return nil, errAt(col, "no command %q; help lists them", topic).withSuggest(nearest(topic, append(specNames(), firstWords()...)))
	}
	return Help{Topic: topic}, nil
}

func buildLogFiles(p *parser, s *Spec) (Command, *posError) {
	t, err := p.arg("a partition, like orders/0")
	if err != nil {
		return nil, err
	}
	tg, terr := parseTarget(t.text)
	if terr != nil || !tg.IsPartition {
		return nil, errAt(t.col, "log files needs a partition, written TOPIC/N like orders/0, not %q", t.text)
	}
	if on, ok := p.peek(); !ok || on.kind != tWord || on.text != "on" {
		col, got := p.end, ""
		if ok {
			col, got = on.col, ", not "+strconv.Quote(on.text)
		}
		return nil, errAt(col, "expected \"on\" and a node after the partition%s; %s", got, p.usageHint())
	}
	p.pos++
	n, err := p.nodeRef()
	if err != nil {
		return nil, err
	}
	return LogFiles{Partition: tg, Node: n}, p.done()
}

func buildLogDump(p *parser, _ *Spec) (Command, *posError) {
	t, err := p.arg("a segment file, like n2/orders-0/00000000000000000000.log")
	if err != nil {
		return nil, err
	}
	if path.IsAbs(t.text) || strings.HasPrefix(path.Clean(t.text), "..") {
		return nil, errAt(t.col, "name a file inside the lab's log folder, as log files shows it: n2/orders-0/00000000000000000000.log")
	}
	o, err := p.options()
	if err != nil {
		return nil, err
	}
	return LogDump{File: path.Clean(t.text), Records: o.bool("records")}, nil
}
