//go:build race

package lessons

// raceEnabled: the race detector is on. The curriculum then plays only
// raceLessons, once each, to look for races where a lesson's player drives
// the lab: a consumer group feeding a service's SQL tables, and failover,
// both short (the lab's own tests run its workers, queues, retry topics
// and services under the detector, at length). Every lesson and its
// mutation play in the plain run.
const raceEnabled = true
