package lab

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// log files lists a replica's segments as they are on disk, and log dump
// prints one as kafka-dump-log would.
func TestLogFilesAndDump(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1 segment=4", "produce orders count=10 batch=2 value=\"order {n}\"",
		"wait hwm(orders/0@n2) == 10")
	if got := l.Snapshot().LogDir; got != l.LogDir() || got == "" {
		t.Errorf("the snapshot names the log folder %q, want %q", got, l.LogDir())
	}
	res := mustRun(t, l, "log files orders/0 on n2", "log dump n2/orders-0/00000000000000000004.log records=true")
	files := strings.Join(res[0].Lines, "\n")
	for _, want := range []string{
		"n2's copy of orders/0: n2/orders-0/ in " + l.LogDir(),
		"00000000000000000000.log ",
		"offsets 0–3, 2 batches",
		"00000000000000000008.log ",
		"offsets 8–9, 1 batch, active",
		"00000000000000000004.timeindex      12 B  1 entry",
	} {
		if !strings.Contains(files, want) {
			t.Errorf("log files lacks %q:\n%s", want, files)
		}
	}
	dump := strings.Join(res[1].Lines, "\n")
	for _, want := range []string{
		"Dumping 00000000000000000004.log",
		"baseOffset: 4 lastOffset: 5 count: 2 partitionLeaderEpoch: ",
		"crcValid: true",
		"| offset: 5 CreateTime: ",
		"payload: order 5",
	} {
		if !strings.Contains(dump, want) {
			t.Errorf("log dump lacks %q:\n%s", want, dump)
		}
	}
	// n2 dies writing: its restart cuts the torn batch and raft brings it
	// back, and the timeline says so.
	mustRun(t, l, "crash n2 torn", "restart n2", "wait hwm(orders/0@n2) == 10")
	var said []string
	for _, e := range l.Snapshot().Timeline {
		said = append(said, e.Text)
	}
	all := strings.Join(said, "\n")
	for _, want := range []string{
		"log files orders/0 on n2", // a look into the files shows on the timeline, as sql's rows do
		"offsets 8–9, 1 batch, active",
		"baseOffset: 4 lastOffset: 5 count: 2 partitionLeaderEpoch: ",
		"crash n2 torn",
		"n2 died writing orders/0: the batch of offsets 8–9 is torn after ",
		"n2 recovered orders/0: cut ",
		" of a torn batch at offset 8; from its files: offsets 0–7 in 3 segments",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the timeline lacks %q:\n%s", want, all)
		}
	}
	for line, want := range map[string]string{
		"log files orders/0 on n4":                      "n4",
		"log files orders/1 on n2":                      "orders",
		"log dump n2/orders-0/00000000000000000099.log": "no file n2/orders-0/00000000000000000099.log",
		"log dump n2/orders-0":                          "is a folder",
		"log dump n2/orders-0/notes.txt":                "not a segment file",
	} {
		if _, err := l.Exec(context.Background(), line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want an error naming %q", line, err, want)
		}
	}
}

// segments, segment and position read the replica's files: the count of
// segments, the base offset a file is named after, and the byte a lookup
// through the .index lands on, the same byte log dump prints.
func TestSegmentValuesReadTheFiles(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1 segment=4",
		`produce orders count=9 batch=2 value="order {n}"`, `produce orders value="a longer order 10"`,
		"wait hwm(orders/0@n2) == 10")
	// Segments of at most 4 records: 0–3, 4–7, 8–9 (offset 9 in a batch of its own).
	dump := mustRun(t, l, "log dump n2/orders-0/00000000000000000008.log")[0].Lines
	var second int
	for _, line := range dump {
		if strings.HasPrefix(line, "baseOffset: 9 ") {
			_, after, _ := strings.Cut(line, " position: ")
			fmt.Sscan(after, &second)
		}
	}
	if second == 0 {
		t.Fatalf("log dump shows no batch at offset 9:\n%s", strings.Join(dump, "\n"))
	}
	mustRun(t, l,
		"expect segments(orders/0) == 3",
		"expect segments(orders/0@n3) == 3",
		"expect segment(orders/0) == 8",
		"expect segment(orders/0@n2, 5) == 4",
		"expect segment(orders/0, 3) == 0",
		"expect position(orders/0@n2, 8) == 0",
		fmt.Sprintf("expect position(orders/0@n2, 9) == %d", second),
		"expect position(orders/0@n2, 5) == position(orders/0@n2, 4)", // one batch holds 4 and 5
		"expect position(orders/0@n2, 6) > position(orders/0@n2, 5)",
	)
	for line, want := range map[string]string{
		"expect position(orders/0@n2, 10) == 0": "n2's files hold offsets 0 to 9, not 10",
		"expect segment(orders/0@n4, 1) == 0":   "n4",
	} {
		if _, err := l.Exec(context.Background(), line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want an error naming %q", line, err, want)
		}
	}
}
