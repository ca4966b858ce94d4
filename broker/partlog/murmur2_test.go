package partlog

import "testing"

func TestMurmur2KafkaVectors(t *testing.T) {
	// Kafka's published values: UtilsTest.testMurmur2 in apache/kafka
	// (clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java).
	kafka := map[string]int32{
		"21":                         -973932308,
		"foobar":                     -790332482,
		"a-little-bit-long-string":   -985981536,
		"a-little-bit-longer-string": -1486304829,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107,
	}
	for key, want := range kafka {
		if got := Murmur2([]byte(key)); got != want {
			t.Errorf("Murmur2(%q) = %d, Kafka's UtilsTest says %d", key, got, want)
		}
	}

	// librdkafka's table of Java murmur2 results (unittest_murmur2 in
	// src/rdmurmur2.c), which covers every tail length and the empty key.
	const pre = "PreAmbleWillBeRemoved,ThePrePartThatIs"
	librdkafka := []struct {
		key  string
		want uint32
	}{
		{"kafka", 0xd067cf64},
		{"giberish123456789", 0x8f552b0c},
		{"1234", 0x9fc97b14},
		{"234", 0xe7c009ca},
		{"34", 0x873930da},
		{"4", 0x5a4b5ca1},
		{pre, 0x78424f1c},
		{pre[1:], 0x4a62b377},
		{pre[2:], 0xe0e4e09e},
		{pre[3:], 0x62b8b43f},
		{"", 0x106e08d9},
	}
	for _, tc := range librdkafka {
		if got := uint32(Murmur2([]byte(tc.key))); got != tc.want {
			t.Errorf("Murmur2(%q) = %#08x, librdkafka's table says %#08x", tc.key, got, tc.want)
		}
	}
	if Murmur2(nil) != Murmur2([]byte{}) {
		t.Error("nil and empty keys hash differently")
	}
}

func TestPartitionForKey(t *testing.T) {
	// Derived from the published hashes: toPositive clears the sign bit,
	// -973932308 & 0x7fffffff = 1173551340; -790332482 -> 1357151166.
	for _, tc := range []struct {
		key        string
		partitions int
		want       int
	}{
		{"21", 1, 0},
		{"21", 7, 1173551340 % 7},
		{"21", 100, 40},
		{"foobar", 6, 1357151166 % 6},
		{"abc", 10, 479470107 % 10},
		{"abc", 0, 0}, // misconfigured: no panic
		{"abc", -3, 0},
	} {
		if got := PartitionForKey([]byte(tc.key), tc.partitions); got != tc.want {
			t.Errorf("PartitionForKey(%q, %d) = %d, want %d", tc.key, tc.partitions, got, tc.want)
		}
	}
}
