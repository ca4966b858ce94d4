package command

// The writing commands: produce to a topic and wait for the outcomes, or
// load a topic (or a queue) in the background.

import (
	"strconv"
	"time"
)

// Produce writes Count messages to a topic and waits for their outcomes.
// In Key and Value, {n} stands for the message's number, from 1.
type Produce struct {
	Topic      string
	Key        string
	Keyed      bool // a key was given (an empty key is still a key)
	Value      string
	HasValue   bool
	Acks       string // "0", "1", "all", or "" for the default (all)
	Idempotent bool
	Count      int // at least 1
	As         string
	Batch      int // records per request, at least 1
	Partition  int
	Pinned     bool // partition= was given
	Tombstone  bool // a null value: on a compacted topic, the key's delete
}

func (Produce) Name() string { return "produce" }
func (c Produce) String() string {
	return words("produce", c.Topic).
		optIf(c.Keyed, "key", quoteText(c.Key)).
		optIf(c.HasValue, "value", quoteText(c.Value)).
		optIf(c.Tombstone, "tombstone", "true").
		optIf(c.Acks != "", "acks", c.Acks).
		optIf(c.Idempotent, "idempotent", "true").
		optIf(c.Count != DefaultCount, "count", strconv.Itoa(c.Count)).
		optIf(c.As != "", "as", c.As).
		optIf(c.Batch != DefaultBatch, "batch", strconv.Itoa(c.Batch)).
		optIf(c.Pinned, "partition", strconv.Itoa(c.Partition)).String()
}

// checkIdempotent rejects idempotent=true with acks other than all, as the
// broker would, but with the column.
func checkIdempotent(o opts) *posError {
	if o.bool("idempotent") && o.has("acks") && o.str("acks") != "all" {
		return errAt(o["idempotent"].col, "idempotent=true needs acks=all: with acks=%s a write the leader acknowledged can still vanish", o.str("acks"))
	}
	return nil
}

func buildProduce(p *parser, _ *Spec) (Command, *posError) {
	topic, o, err := p.nameThenOptions("a topic")
	if err != nil {
		return nil, err
	}
	if err := checkIdempotent(o); err != nil {
		return nil, err
	}
	c := Produce{Topic: topic, Acks: o.str("acks"), Idempotent: o.bool("idempotent"), Count: o.int("count", DefaultCount),
		As: o.str("as"), Batch: o.int("batch", DefaultBatch), Partition: o.int("partition", 0), Pinned: o.has("partition")}
	c.Key, c.Keyed = o.text("key")
	c.Value, c.HasValue = o.text("value")
	c.Tombstone = o.bool("tombstone")
	if c.Tombstone && c.HasValue {
		return nil, errAt(o["tombstone"].col, "a tombstone has no value (it is null); leave out value= or tombstone=true")
	}
	return c, nil
}

// Load starts a background generator that produces to Topic at Rate
// messages per second of lab time, for For, after waiting After.
type Load struct {
	Topic      string
	Rate       float64 // messages per second
	For        time.Duration
	After      time.Duration
	Key        string
	Keyed      bool
	Value      string
	HasValue   bool
	Acks       string
	Idempotent bool
	As         string
	Batch      int
}

func (Load) Name() string { return "load" }
func (c Load) String() string {
	return words("load", c.Topic).opt("rate", formatRate(c.Rate)).opt("for", formatDuration(c.For)).
		optIf(c.After != 0, "after", formatDuration(c.After)).
		optIf(c.Keyed, "key", quoteText(c.Key)).
		optIf(c.HasValue, "value", quoteText(c.Value)).
		optIf(c.Acks != "", "acks", c.Acks).
		optIf(c.Idempotent, "idempotent", "true").
		optIf(c.As != "", "as", c.As).
		optIf(c.Batch != DefaultBatch, "batch", strconv.Itoa(c.Batch)).String()
}

func buildLoad(p *parser, _ *Spec) (Command, *posError) {
	topic, o, err := p.nameThenOptions("a topic or queue")
	if err != nil {
		return nil, err
	}
	if err := checkIdempotent(o); err != nil {
		return nil, err
	}
	c := Load{Topic: topic, Rate: o.float("rate"), For: o.dur("for"), After: o.dur("after"), Acks: o.str("acks"),
		Idempotent: o.bool("idempotent"), As: o.str("as"), Batch: o.int("batch", DefaultBatch)}
	c.Key, c.Keyed = o.text("key")
	c.Value, c.HasValue = o.text("value")
	return c, nil
}

// LoadStop stops the generators on a topic or run as a client; every
// generator when Target is empty.
type LoadStop struct{ Target string }

func (LoadStop) Name() string { return "load stop" }
func (c LoadStop) String() string {
	p := words("load", "stop")
	if c.Target != "" {
		p.word(c.Target)
	}
	return p.String()
}

func buildLoadStop(p *parser, _ *Spec) (Command, *posError) {
	var c LoadStop
	if t, ok := p.peek(); ok && t.kind == tWord && !t.isOption() {
		name, err := p.name("a topic or client")
		if err != nil {
			return nil, err
		}
		c.Target = name
	}
	return c, p.done()
}
