// Package parallel lets the tests of packages that mostly wait (on lab
// time, on raft's timers, on programs they run) run more at once.
package parallel

import "flag"

// Raise makes go test run up to n parallel tests at a time unless
// -test.parallel was given: the tests of labs mostly wait on lab time and
// raft's timers, so more than one per core finish sooner. Call it from
// TestMain before m.Run. Under the race detector, where the same tests
// take more of the CPU, pass a smaller n, or leave the default by not
// calling it. While fuzzing it does nothing: -test.parallel is then the
// number of fuzzing processes, one per core unless given.
func Raise(n string) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if fuzz := flag.Lookup("test.fuzz"); fuzz != nil && fuzz.Value.String() != "" {
		set = true
	}
	if !set {
		flag.Set("test.parallel", n)
	}
}
