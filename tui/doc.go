// Package tui draws mqlab in the terminal: the lesson picker, and the lab
// screen — the lesson pane, the cluster with every replica's log, consumer
// groups, queues, service tables, the timeline, the checker and a chart,
// with keys, a ':' command prompt, help and a history to step back
// through.
//
// The screen reads a Source: plain view-model values (ViewState) and one
// Exec for command lines. Every key that changes the lab sends the line a
// learner could type at the prompt ("kill n2"), so keys, lessons and
// scripts share one command language. LabSource turns a running lab's
// snapshots into ViewStates and runs lines through lab.Exec; LessonSource
// wraps one to play a lesson through a lessons.Player (its step as it
// plays, tasks the learner does with keys, predictions, ✓/✗) and takes the
// lesson commands; ReplaySource plays a recording (script --record)
// read-only. The tests draw a recording of a real lab, testdata/scene.*.
//
// App is the whole program: the picker first, then the lab screen for the
// lesson or the sandbox chosen, and back.
package tui
