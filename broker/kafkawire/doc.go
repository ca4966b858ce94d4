// Package kafkawire puts the Kafka protocol in front of every node of a
// cluster, so clients someone else wrote — kcat and librdkafka, franz-go,
// kafka-python, kafkajs, the Java client — produce and consume against it.
//
// Node nI listens on port+I−1. A request is handled by the node it reached,
// through the broker's front for that node and client (Cluster.Front),
// whose partition handles produce, fetch and list offsets and whose group
// handles carry the coordinator's requests: a node answers for the
// partitions it leads and the groups it coordinates and refuses the rest as a Kafka broker does
// (NOT_LEADER_OR_FOLLOWER, NOT_COORDINATOR), and the client refreshes its
// metadata. Every request crosses the broker's fault network under the
// client's client.id, so faults reach wire clients as they reach the lab's:
//
//   - a killed node closes its listener and drops its connections; a
//     restart opens the listener again;
//   - an isolated node stops answering: its requests wait, as bytes wait
//     in TCP behind a cut cable, and are handled once the link heals,
//     unless the client gives up first;
//   - a slowed node answers late;
//   - a lost reply (or lost ack, for an OffsetCommit) closes the
//     connection with the request done (or not done), so the client sees
//     a broken connection and retries.
//
// An admin client can create topics with their configs and describe them
// (DescribeConfigs answers each config the lab has by Kafka's name, with
// the value the partitions use); a topic's configs are fixed when it is
// created, so AlterConfigs and IncrementalAlterConfigs are refused per
// resource with that reason.
//
// The codec is franz-go's kmsg; record batches are checked with their
// CRC-32C and decompressed (gzip, snappy, lz4, zstd) to check their
// records, then handed to the partition as they arrived: its raft entry
// and every replica's segment file hold the client's bytes. A fetch
// answers with byte ranges of the leader's segment file, whole batches
// as they are, spliced into the framed answer (answer.go) and sent from
// the file to the socket. Bad input — a frame
// over the size limit, an unknown key or version, garbage, a truncated
// frame — closes that connection with an event that says why; other
// connections go on.
package kafkawire
