// Package tui draws mqlab's lab screen in the terminal: the lesson pane,
// the cluster with every replica's log, consumer groups, queues, service
// tables, the timeline, the checker and a chart, with keys, a ':' command
// prompt, help and a history to step back through.
//
// The screen reads a Source: plain view-model values (ViewState) and one
// Exec for command lines. Every key that changes the lab sends the line a
// learner could type at the prompt ("kill n2"), so keys, lessons and
// scripts share one command language. LabSource turns a running lab's
// snapshots into ViewStates and runs lines through lab.Exec; ReplaySource
// plays a recording (script --record) read-only; DemoSource is a small
// pretend lab for a demo mode and the tests.
package tui
