// Package lab is the world a learner drives: one Lab holds a broker
// cluster, the services over their SQL tables, workload generators, the
// clock, the checker and the timeline, and runs the command language that
// the screens, the lessons and scripts all speak.
//
// Exec runs one line of the language (package lab/command parses it);
// Snapshot copies everything the screens show; Subscribe streams the
// timeline; Check drains the cluster and returns the checker's report
// (package lab/checker). The services of package lab/services run behind
// service, order, sql, rows(…) and state(…) (feature_services.go); consumer
// clients of the broker's groups behind consumer, seek, lag(…),
// delivered(…) and processed(…) (feature_groups.go); work queues and
// their workers behind queue, send, worker, redrive, depth(…) and
// inflight(…) (feature_queues.go); the Kafka and SQS listeners that let
// outside clients in behind kafka listen and sqs listen (feature_kafka.go,
// feature_sqs.go). features.go is where they are wired in.
package lab
