//go:build race

package lab

// raceEnabled: the race detector is on. The scripts' mutations then stay
// out: they drive the same scenes TestScripts does, which the race pass
// runs, and every mutation runs in the plain pass.
const raceEnabled = true
