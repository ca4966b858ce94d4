package command

import "time"

// Command is one parsed, validated command. String prints it in the form
// Parse reads back into an equal command.
//
// Each family of commands has a file of its own (faults.go, queues.go,
// clock.go, …) that holds its types, how each prints, and its builder:
// the function the table (Specs) calls to read the command's arguments
// and options from the parser and check what one option alone cannot.
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

// buildBare builds a command that takes nothing after its name: heal,
// resume, kafka stop, sqs stop.
func buildBare(c Command) func(*parser, *Spec) (Command, *posError) {
	return func(p *parser, _ *Spec) (Command, *posError) { return c, p.done() }
}
