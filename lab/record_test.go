package lab

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mqlab/mqlab/broker"
)

// A recording holds every event in order and snapshots with the cluster
// and clients a replay draws.
func TestRecorder(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
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

// ReadRecording gives back every event and every snapshot in order, and
// names the entry that does not read.
func TestReadRecording(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	var buf bytes.Buffer
	rec := NewRecorder(l, &buf)
	mustRun(t, l, "topic create orders partitions=1", "produce orders key=881 count=3")
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	got, err := ReadRecording(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Frames) < 2 || len(got.Events) < 5 {
		t.Fatalf("%d frames, %d events", len(got.Frames), len(got.Events))
	}
	lastFrame := got.Frames[len(got.Frames)-1]
	if lastFrame.Events != len(got.Events) || lastFrame.Snapshot.Clients[0].Acknowledged != 3 {
		t.Errorf("the last frame follows %d of %d events, with %+v", lastFrame.Events, len(got.Events), lastFrame.Snapshot.Clients)
	}
	for i := 1; i < len(got.Frames); i++ {
		if got.Frames[i].At < got.Frames[i-1].At || got.Frames[i].Events < got.Frames[i-1].Events {
			t.Errorf("frame %d goes back in time", i)
		}
	}
	if _, err := ReadRecording(bytes.NewReader(append(append([]byte(nil), data...), "{oops\n"...))); err == nil ||
		!strings.Contains(err.Error(), fmt.Sprintf("entry %d", bytes.Count(data, []byte("\n"))+1)) {
		t.Errorf("a bad entry: %v", err)
	}
	if _, err := ReadRecording(strings.NewReader("")); !errors.Is(err, ErrEmptyRecording) {
		t.Errorf("an empty recording: %v", err)
	}
}

// An event about the controller or an internal topic is the broker's own;
// one about the learner's topic is not.
func TestInternalEvents(t *testing.T) {
	for _, c := range []struct {
		e    Event
		want bool
	}{
		{Event{Broker: &broker.Event{Group: "controller"}}, true},
		{Event{Broker: &broker.Event{Group: "__consumer_offsets/0"}}, true},
		{Event{Text: "n3 now coordinates the groups of __consumer_offsets/0"}, true},
		{Event{Broker: &broker.Event{Group: "orders/0"}, Text: "n1 leads orders/0 at epoch 2"}, false},
		{Event{Kind: EventCommand, Text: "kill n1"}, false},
	} {
		if got := c.e.Internal(); got != c.want {
			t.Errorf("%+v: internal %v, want %v", c.e, got, c.want)
		}
	}
}
