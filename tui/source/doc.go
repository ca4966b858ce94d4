// Package source holds the screen's sources: a running lab's (LabSource,
// mapping lab snapshots to view.State), a lesson played on it through a
// lessons.Player (LessonSource), a recording made with mqlab script
// --record (ReplaySource), and a teacher's lab shared with the students
// who follow it (Class).
package source
