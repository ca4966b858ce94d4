// Package tui draws mqlab in the terminal: the lesson picker, and the lab
// screen — the lesson pane, the cluster with every replica's log, consumer
// groups, queues, service tables, the timeline, the checker and a chart,
// with keys, a ':' command prompt, help and a history to step back
// through.
//
// The screen reads a view.Source: plain view-model values (view.State)
// and one Exec for orders. A key that changes the lab builds the typed
// lab command it means (command.Kill{n2}), the prompt parses a typed line
// once (ParseOrder), and both reach the source as the same view.Order, so
// keys, lessons and scripts share one command language.
//
// The rooms under it:
//   - view: what a screen reads and sends (view.State, Source, Order);
//   - source: the sources — a running lab's snapshots (LabSource), a
//     lesson played on it through a lessons.Player (LessonSource), a
//     recording (ReplaySource), a teacher's lab shared with a class;
//   - panel: the lab screen's panels, each a component with its own keys,
//     sharing one panel.Context;
//   - keys: the screen's own keys; draw: the theme, text and Markdown;
//   - internal: what the tests share, among it a recording of a real lab.
//
// App is the whole program: the picker first, then the lab screen for the
// lesson or the sandbox chosen, and back.
package tui
