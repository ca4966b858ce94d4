//go:build race

package kafkawire

// tortureSeeds is how many seeds TestTortureKgo plays unless told: under
// the race detector one, as its clients and faults drive the same code
// at each seed and the plain run plays three.
const tortureSeeds = 1
