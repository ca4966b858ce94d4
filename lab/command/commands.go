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
