//go:build !race

package broker

// The default run: ten seeds of 300 messages, well under a minute.
const defaultTortureSeeds = 10
