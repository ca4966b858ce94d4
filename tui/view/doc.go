// Package view is what the lab screen reads and sends: the view-model
// values a source gives for one moment of the lab (State and the types in
// it, plain values a screen may keep in its history), the Source it reads
// them from, and the Order it sends back.
package view
