//go:build !race

package kafkawire

// tortureSeeds is how many seeds TestTortureKgo plays unless told.
const tortureSeeds = 3
