// Package lab is the world a learner drives: one Lab holds a broker
// cluster, the services over their SQL tables, workload generators, the
// clock, the checker and the timeline, and runs the command language that
// the screens, the lessons and scripts all speak.
package lab
