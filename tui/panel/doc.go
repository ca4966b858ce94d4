// Package panel holds the lab screen's panels — the lesson, the cluster,
// groups, queues, services, the timeline, the checker, the chart and
// raft. Each is a Component: it draws itself at the size it is given and
// takes its own keys; all share one Context.
package panel
