//go:build race

package lessons

// raceEnabled: the race detector is on. The curriculum then plays only
// raceLessons, once each, to look for races where a lesson's player drives
// the lab: workers and queues, and failover (the lab's own tests run its
// retry topics and SQL services under the detector). Every lesson and its
// mutation play in the plain run.
const raceEnabled = true
