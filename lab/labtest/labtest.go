// Package labtest holds what the tests of packages that drive labs share.
package labtest

import "flag"

// RaiseParallel makes go test run up to n parallel tests at a time unless
// -test.parallel was given: the tests of labs mostly wait on lab time and
// raft's timers, so more than one per core finish sooner. Call it from
// TestMain before m.Run. Under the race detector, where those tests are
// CPU-bound, leave the default by not calling it.
func RaiseParallel(n string) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", n)
	}
}
