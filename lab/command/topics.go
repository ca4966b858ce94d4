package command

// The topic commands: a topic's creation, and its log on disk: compaction,
// a replica's segment files and one file's batches.

import (
	"path"
	"strconv"
	"strings"
	"time"
)

// TopicCreate creates a partitioned log.
type TopicCreate struct {
	Topic      string
	Partitions int
	RF         int    // 0: the cluster's default
	Segment    Amount // records (Count) or bytes; zero: the broker's default
	Retention  Amount // age or bytes; zero: keep everything
	// Cleanup is "delete", "compact" or "compact,delete"; "" is delete.
	Cleanup         string
	DeleteRetention time.Duration // how long a tombstone stays; zero: the broker's default (one day)
	Cleaner         string        // "auto", "manual", or "" (auto)
}

func (TopicCreate) Name() string { return "topic create" }
func (c TopicCreate) String() string {
	return words("topic", "create", c.Topic).opt("partitions", strconv.Itoa(c.Partitions)).
		optIf(c.RF != 0, "rf", strconv.Itoa(c.RF)).
		optIf(c.Segment != Amount{}, "segment", c.Segment.String()).
		optIf(c.Retention != Amount{}, "retention", c.Retention.String()).
		optIf(c.Cleanup != "", "cleanup", c.Cleanup).
		optIf(c.DeleteRetention != 0, "delete-retention", formatDuration(c.DeleteRetention)).
		optIf(c.Cleaner != "", "cleaner", c.Cleaner).String()
}

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

// Compact runs one compaction pass on a partition of a compacted topic.
type Compact struct {
	Partition Target
}

func (Compact) Name() string     { return "compact" }
func (c Compact) String() string { return "compact " + c.Partition.String() }

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

// LogFiles lists the segment files of one replica of a partition.
type LogFiles struct {
	Partition Target
	Node      NodeRef
}

func (LogFiles) Name() string { return "log files" }
func (c LogFiles) String() string {
	return "log files " + c.Partition.String() + " on " + c.Node.String()
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
	if err := p.keyword("on", "expected \"on\" and a node after the partition%s; %s"); err != nil {
		return nil, err
	}
	n, err := p.nodeRef()
	if err != nil {
		return nil, err
	}
	return LogFiles{Partition: tg, Node: n}, p.done()
}

// LogDump prints a segment file of the lab's log folder, File relative to
// it, as Kafka's kafka-dump-log does.
type LogDump struct {
	File    string
	Records bool
}

func (LogDump) Name() string { return "log dump" }
func (c LogDump) String() string {
	return words("log dump", quoteText(c.File)).optIf(c.Records, "records", "true").String()
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
