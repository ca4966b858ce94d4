//go:build !unix

package broker

import "time"

// processCPU is unknown here: the benchmarks report no CPU time.
func processCPU() time.Duration { return 0 }
