//go:build !race

package lessons

const raceEnabled = false
