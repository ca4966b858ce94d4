// Package command is mqlab's command language: one line is a verb, an
// object, then key=value options, with '#' starting a comment. Parse turns a
// line into a typed Command whose options are already checked, so a script
// or a lesson can be validated without running anything; String prints a
// command back in the form Parse reads.
//
// The table of commands (Specs) is the single source for the parser, the
// help text and the suggestions made on a typo, so they cannot drift apart.
//
// The package knows nothing of brokers or raft: resolving a node reference
// such as leader(orders/0), or reading a lab value such as hwm(orders/0), is
// the lab's job when the command runs.
package command
