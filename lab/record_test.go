package lab

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
)

// A recording holds every event in order and snapshots with the cluster
// and clients a replay draws.
func TestRecorder(t *testing.T) {
	l := newLab(t)
	var buf bytes.Buffer
	rec := NewRecorder(l, &buf)
	mustRun(t, l, "topic create orders partitions=1", "produce orders key=881 count=3", "kill leader(orders/0)", "wait leader(orders/0) != none")
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	var events, snapshots int
	var lastSeq uint64
	var last RecordEntry
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e RecordEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		switch e.Type {
		case "event":
			events++
			if e.Event.Seq <= lastSeq {
				t.Errorf("event %d after %d", e.Event.Seq, lastSeq)
			}
			lastSeq = e.Event.Seq
		case "snapshot":
			snapshots++
			last = e
		default:
			t.Errorf("entry type %q", e.Type)
		}
	}
	if events < 10 || snapshots < 2 {
		t.Errorf("%d events, %d snapshots", events, snapshots)
	}
	s := last.Snapshot
	if s == nil || len(s.Cluster.Nodes) != 3 || len(s.Clients) != 1 || s.Clients[0].Acknowledged != 3 || s.Timeline != nil {
		t.Errorf("last snapshot %+v", s)
	}
}
