package partlog

import "encoding/binary"

// Murmur2 is Kafka's Utils.murmur2: 32-bit MurmurHash2 with Kafka's seed,
// which the Java client's default partitioner applies to record keys.
// Matching it bit for bit means a key lands on the same partition number
// here as it would in Kafka. Java does this in signed int arithmetic; the
// uint32 arithmetic below has the same bits, with Java's >>> as Go's >>.
func Murmur2(data []byte) int32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	h := uint32(seed) ^ uint32(len(data))
	whole := len(data) &^ 3
	for i := 0; i < whole; i += 4 {
		k := binary.LittleEndian.Uint32(data[i:])
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	// The 1 to 3 bytes left over, falling through as Java's switch does.
	tail := data[whole:]
	switch len(tail) {
	case 3:
		h ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(tail[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// PartitionForKey picks a partition for a key as Kafka's default
// partitioner does: toPositive(murmur2(key)) % partitions, where toPositive
// clears the sign bit (not Math.abs, which fails for MinInt32). Unkeyed
// records are the caller's business (Kafka spreads them with its sticky
// partitioner). It returns 0 when partitions < 1, so a misconfigured topic
// cannot make it panic.
func PartitionForKey(key []byte, partitions int) int {
	if partitions < 1 {
		return 0
	}
	return int(Murmur2(key)&0x7fffffff) % partitions
}
