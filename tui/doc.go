// Package tui draws mqlab in the terminal: the lesson picker and the lab
// screen with its panels, keys and help, reading lab snapshots.
package tui
