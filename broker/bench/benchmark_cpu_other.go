//go:build !unix

package bench

import "time"

// processCPU is unknown here: the benchmarks report no CPU time.
func processCPU() time.Duration { return 0 }
