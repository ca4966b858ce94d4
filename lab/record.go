package lab

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// RecordEntry is one line of a JSONL recording: every event as it
// happened, and a snapshot of the lab after changes, at most one per
// SnapshotEvery. Recorded snapshots leave out their timeline: the event
// lines are the timeline.
type RecordEntry struct {
	Type     string    `json:"type"` // "event" or "snapshot"
	Time     time.Time `json:"time"` // lab time
	Event    *Event    `json:"event,omitempty"`
	Snapshot *Snapshot `json:"snapshot,omitempty"`
}

// SnapshotEvery is the least time between two recorded snapshots.
const SnapshotEvery = 100 * time.Millisecond

// Recorder writes a lab's events and snapshots to a JSONL stream until
// Close, enough for a replay to draw every panel.
type Recorder struct {
	l    *Lab
	sub  *Subscription
	out  *bufio.Writer
	enc  *json.Encoder
	stop chan struct{}
	done chan struct{}

	mu  sync.Mutex
	err error
}

// NewRecorder starts recording l to w: a snapshot now, then events and
// snapshots as the lab changes.
func NewRecorder(l *Lab, w io.Writer) *Recorder {
	out := bufio.NewWriter(w)
	r := &Recorder{l: l, sub: l.Subscribe(1 << 16), out: out, enc: json.NewEncoder(out), stop: make(chan struct{}), done: make(chan struct{})}
	r.snapshot()
	go r.loop()
	return r
}

func (r *Recorder) write(e RecordEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = r.enc.Encode(e)
	}
}

func (r *Recorder) snapshot() {
	s := r.l.Snapshot()
	s.Timeline = nil
	r.write(RecordEntry{Type: "snapshot", Time: s.Time, Snapshot: &s})
}

func (r *Recorder) loop() {
	defer close(r.done)
	tick := time.NewTicker(SnapshotEvery)
	defer tick.Stop()
	dirty := false
	event := func(e Event) {
		r.write(RecordEntry{Type: "event", Time: e.Time, Event: &e})
		dirty = true
	}
	for {
		select {
		case e, ok := <-r.sub.C:
			if !ok {
				return
			}
			event(e)
		case <-tick.C:
			if dirty {
				r.snapshot()
				dirty = false
			}
		case <-r.stop:
			for {
				select {
				case e, ok := <-r.sub.C:
					if !ok {
						return
					}
					event(e)
				default:
					return
				}
			}
		}
	}
}

// Close records what is still pending and a last snapshot, flushes, and
// returns the first write error.
func (r *Recorder) Close() error {
	close(r.stop)
	<-r.done
	r.sub.Close()
	r.snapshot()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = r.out.Flush()
	}
	return r.err
}

// ErrEmptyRecording: a recording holds no snapshot to draw.
var ErrEmptyRecording = errors.New("the recording holds no snapshot")

// Recording is a JSONL recording read back: every event in order, and
// every snapshot with the time it is played at.
type Recording struct {
	// Start is the lab time of the recording's first entry.
	Start time.Time
	// Events is every event, Detail ones included, in order.
	Events []Event
	// Frames is every snapshot, in order.
	Frames []Frame
}

// Frame is one recorded snapshot.
type Frame struct {
	// At is when the frame plays, from the first event: the wall time of
	// the last event before it (the recorder writes a snapshot shortly
	// after the events that changed the lab), so a replay keeps the
	// recording's pace even where lab time ran faster, slower or stood.
	// Without wall times, lab time from the start.
	At time.Duration
	// Snapshot is the lab as it was, without its timeline.
	Snapshot Snapshot
	// Events is how many of the recording's events came before it.
	Events int
}

// ReadRecording reads a recording made by a Recorder. An entry that does
// not decode is an error naming it; a recording without a snapshot is
// ErrEmptyRecording.
func ReadRecording(r io.Reader) (*Recording, error) {
	rec := &Recording{}
	dec := json.NewDecoder(r)
	var first, last time.Time // wall times of events
	for n := 1; ; n++ {
		var e RecordEntry
		if err := dec.Decode(&e); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("entry %d of the recording does not read: %w", n, err)
		}
		if n == 1 {
			rec.Start = e.Time
		}
		switch {
		case e.Type == "event" && e.Event != nil:
			if w := e.Event.Wall; !w.IsZero() {
				if first.IsZero() {
					first = w
				}
				last = w
			}
			rec.Events = append(rec.Events, *e.Event)
		case e.Type == "snapshot" && e.Snapshot != nil:
			f := Frame{Snapshot: *e.Snapshot, Events: len(rec.Events)}
			switch {
			case !last.IsZero():
				f.At = last.Sub(first)
			case first.IsZero():
				f.At = e.Time.Sub(rec.Start)
			}
			if k := len(rec.Frames); k > 0 {
				f.At = max(f.At, rec.Frames[k-1].At)
			}
			rec.Frames = append(rec.Frames, f)
		}
	}
	if len(rec.Frames) == 0 {
		return nil, ErrEmptyRecording
	}
	return rec, nil
}
