//go:build race

package lessons

// raceEnabled: the race detector is on. The curriculum then plays only
// raceLessons, once each, to look for races where lessons drive the lab
// hardest: workers and queues, groups with retry topics, services over
// SQL, and failover. Every lesson and its mutation play in the plain run.
const raceEnabled = true
