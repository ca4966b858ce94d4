package command

import (
	"strconv"
	"time"
)

// Command is one parsed, validated command. String prints it in the form
// Parse reads back into an equal command.
type Command interface {
	// Name is the command's entry in the table (Specs): "kill",
	// "topic create", "drop next reply", …
	Name() string
	String() string
}

// Defaults the parser fills in when an option is left out.
const (
	DefaultWaitTimeout = 10 * time.Second
	DefaultCount       = 1
	DefaultBatch       = 1
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

// Compact runs one compaction pass on a partition of a compacted topic.
type Compact struct {
	Partition Target
}

func (Compact) Name() string     { return "compact" }
func (c Compact) String() string { return "compact " + c.Partition.String() }

// Wait polls a condition until it holds or Timeout (wall clock) passes.
type Wait struct {
	Cond    Condition
	Timeout time.Duration
}

func (Wait) Name() string { return "wait" }
func (c Wait) String() string {
	return words("wait", c.Cond.String()).optIf(c.Timeout != DefaultWaitTimeout, "timeout", formatDuration(c.Timeout)).String()
}

// Expect checks a condition once.
type Expect struct{ Cond Condition }

func (Expect) Name() string     { return "expect" }
func (c Expect) String() string { return "expect " + c.Cond.String() }

// Check drains and prints the checker's report. With Why it also lists
// the records behind Field's count, or behind every count that is not
// zero when Field is "".
type Check struct {
	Why   bool
	Field string
}

func (Check) Name() string { return "check" }
func (c Check) String() string {
	switch {
	case c.Field != "":
		return "check why " + c.Field
	case c.Why:
		return "check why"
	}
	return "check"
}

// Help lists the commands, or explains one.
type Help struct{ Topic string }

func (Help) Name() string { return "help" }
func (c Help) String() string {
	if c.Topic == "" {
		return "help"
	}
	return "help " + c.Topic
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
