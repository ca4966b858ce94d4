package lab

import (
	"bufio"
	"encoding/json"
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
