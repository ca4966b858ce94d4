// Package broker is mqlab's message broker: several nodes in one process,
// each partition of each topic its own hashicorp/raft group whose replicas
// live on rf of the nodes, and a controller group on every node that holds
// topic metadata and hands out producer ids.
//
// Raft traffic and client requests cross an in-memory network that can be
// cut, slowed or told to lose a message (package raftnet). A killed node
// loses everything in memory; what it wrote to its "disk" — each replica's
// raft log store, stable store and snapshots — survives and a restart
// rebuilds from it.
//
// Everything the broker knows can be read back: Snapshot returns a plain
// copyable value (nodes, partitions, every replica's log start, log end,
// high-water mark, entries with their epochs, segments), and Subscribe
// streams events (elections, appends, commits, truncations, faults).
package broker
