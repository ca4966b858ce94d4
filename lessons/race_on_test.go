//go:build race

package lessons

// raceEnabled: the race detector is on. The curriculum then plays each
// lesson once, to look for races; its mutations check the expectations'
// logic, which the plain run covers.
const raceEnabled = true
