// Package lab is the world a learner drives: one Lab holds a broker
// cluster, the services over their SQL tables, the clients and workload
// generators, the clock, the checker and the timeline, and runs the
// command language that the screens, the lessons and scripts all speak.
//
// Exec runs one line of the language (package lab/command parses it);
// Snapshot copies everything the screens show; Subscribe streams the
// timeline; Check drains the cluster and returns the checker's report
// (package lab/checker).
//
// Each cluster command makes a world: the cluster and everything that
// acts on it. lab.go, world.go, exec_cluster.go, produce.go, conditions.go
// and check.go are the core — the commands on the log and the network,
// the values wait and expect read, the check. The families of commands
// beside them are wired in features.go. Those in packages of their own
// get their world through the seam of package lab/family and are made
// per world: lab/kafka (kafka listen, the Kafka protocol on the nodes),
// lab/serviceset (service, order, sql, rows(…): the services of package
// lab/services, which publish through the lab, services.go) and
// lab/checkout (buyers, the checkout's measurements); lab/loads runs load
// generators and lab/series samples lag and depth for the charts. Still
// in this package: consumer clients of the broker's groups
// (feature_groups*.go: consumer, seek, lag(…)) and work queues with their
// workers (feature_queues*.go: queue, send, worker, redrive, depth(…)),
// which share a client machinery (client_*.go) and the policy of package
// lab/clients; and the SQS listener that lets outside SQS clients at the
// queues (feature_sqs.go: sqs listen). The clock is package lab/clock and the timeline package
// lab/timeline; lab keeps its old names for their types (aliases.go).
package lab
