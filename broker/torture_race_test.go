//go:build race

package broker

// Under the race detector every seed runs several times slower; a few
// seeds still put each fault against each client.
const defaultTortureSeeds = 3
