package command

import "time"

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
