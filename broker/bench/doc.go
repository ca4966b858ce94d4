// Package bench measures the broker against its targets: produce at each
// acks level next to bare raft.Apply, consume, franz-go's kgo client
// against the Kafka listener and against kfake, a queue's send, receive
// and ack, failover in election timeouts, and peak memory with a million
// messages retained. Run runs every measurement and returns one report,
// which `mqlab bench` prints; the Go benchmarks of this package run the
// same phases one at a time.
package bench
