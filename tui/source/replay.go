package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/tui/view"
)

// ReplaySource plays a recording made with `mqlab script --record`: the
// snapshots in turn, at the pace they were recorded, each with the
// timeline as it stood. It is read-only (run it with Options.ReadOnly).
// It opens paused at its first snapshot; resume plays it, pause and speed
// pace it, and step forward and step back move one event at a time.
type ReplaySource struct {
	frames []replayFrame
	events []lab.Event // the timeline, Detail events left out, in order
	trunc  truncTimes

	ch   chan struct{}
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once

	mu     sync.Mutex
	pos    int  // the frame on screen
	tl     int  // the timeline events on screen: frame pos's, or more when stepped past it
	shown  bool // View has read frames[pos]: the next may come
	paused bool
	speed  float64
	rec    time.Duration // recorded time played at anchor
	anchor time.Time     // wall time of the last pace change
}

// replayFrame is one recorded snapshot: when it plays, and how much of
// the timeline had happened by then.
type replayFrame struct {
	at    time.Duration
	snap  lab.Snapshot
	tlEnd int
}

// ErrEmptyRecording: the file holds no snapshot to draw.
var ErrEmptyRecording = lab.ErrEmptyRecording

// NewReplay reads a JSONL recording and opens it paused at its first
// snapshot. Close stops it.
func NewReplay(r io.Reader) (*ReplaySource, error) {
	s, err := ReadReplay(r)
	if err != nil {
		return nil, err
	}
	s.tl = s.frames[0].tlEnd
	s.ch = make(chan struct{}, 1)
	s.wake = make(chan struct{}, 1)
	s.stop = make(chan struct{})
	s.done = make(chan struct{})
	s.anchor = time.Now()
	go s.loop()
	return s, nil
}

// ReadReplay reads a JSONL recording without playing it: Frame draws its
// snapshots. NewReplay plays one.
func ReadReplay(r io.Reader) (*ReplaySource, error) {
	s := &ReplaySource{trunc: truncTimes{}, speed: 1, paused: true}
	if err := s.load(r); err != nil {
		return nil, err
	}
	return s, nil
}

// Frame draws snapshot i with the timeline up to it.
func (s *ReplaySource) Frame(i int) view.State { return s.frameView(i, 0) }

// load reads the recording into frames, each with the timeline (its
// events that are not Detail) up to it.
func (s *ReplaySource) load(r io.Reader) error {
	rec, err := lab.ReadRecording(r)
	if err != nil {
		return err
	}
	shown := make([]int, len(rec.Events)+1) // events not Detail before each index
	for i, e := range rec.Events {
		shown[i+1] = shown[i]
		if !e.Detail {
			s.events = append(s.events, e)
			shown[i+1]++
		}
	}
	for _, f := range rec.Frames {
		s.frames = append(s.frames, replayFrame{at: f.At, snap: f.Snapshot, tlEnd: shown[f.Events]})
	}
	s.trunc.learn(s.events)
	return nil
}

// Frames is how many snapshots the recording holds.
func (s *ReplaySource) Frames() int { return len(s.frames) }

// Duration is how long the recording takes to play at 1x.
func (s *ReplaySource) Duration() time.Duration { return s.frames[len(s.frames)-1].at }

// playedLocked is the recorded time played so far.
func (s *ReplaySource) playedLocked() time.Duration {
	if s.paused {
		return s.rec
	}
	return s.rec + time.Duration(float64(time.Since(s.anchor))*s.speed)
}

func (s *ReplaySource) loop() {
	defer close(s.done)
	defer close(s.ch)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := time.Duration(-1) // until woken
		s.mu.Lock()
		if s.pos+1 < len(s.frames) && s.shown && !s.paused {
			due := s.frames[s.pos+1].at
			played := s.playedLocked()
			if played >= due {
				s.pos++
				s.tl = max(s.tl, s.frames[s.pos].tlEnd)
				s.shown = false
				if played > due+100*time.Millisecond {
					// Late (the screen read slowly): slip rather than rush
					// the frames that follow.
					s.rec, s.anchor = due, time.Now()
				}
				s.mu.Unlock()
				s.signal()
				continue
			}
			wait = time.Duration(float64(due-played) / s.speed)
		}
		s.mu.Unlock()
		var tc <-chan time.Time
		if wait >= 0 {
			timer.Reset(wait)
			tc = timer.C
		}
		select {
		case <-tc:
		case <-s.wake:
			timer.Stop() // since Go 1.23, no stale tick can follow
		case <-s.stop:
			return
		}
	}
}

func (s *ReplaySource) signal() {
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

func (s *ReplaySource) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Close stops the playback; Changes is closed.
func (s *ReplaySource) Close() {
	s.once.Do(func() {
		close(s.stop)
		<-s.done
	})
}

// Changes signals a new frame, or a change of pace.
func (s *ReplaySource) Changes() <-chan struct{} { return s.ch }

// View draws the frame being played, with the timeline up to it. Each
// frame is read at least once before the next comes, so the screen's
// history holds every one.
func (s *ReplaySource) View() view.State {
	s.mu.Lock()
	pos, tl, paused, speed := s.pos, s.tl, s.paused, s.speed
	if !s.shown {
		s.shown = true
		defer s.poke()
	}
	s.mu.Unlock()

	v := s.frameView(pos, tl)
	v.Clock = view.Clock{Speed: speed, Paused: paused}
	name := "replay"
	if pos == len(s.frames)-1 && tl == len(s.events) {
		name = "replay ended"
	}
	v.Jobs = append(v.Jobs, view.Job{Name: name, Done: int64(tl), Total: int64(len(s.events))})
	return v
}

// frameView draws frame i with the timeline's first tl events. Frames do
// not change once loaded, so it needs no lock.
func (s *ReplaySource) frameView(i, tl int) view.State {
	f := &s.frames[i]
	snap := f.snap
	tl = min(max(tl, f.tlEnd), len(s.events))
	snap.Timeline = s.events[max(0, tl-timelineSize):tl]
	return viewOf(&snap, s.trunc)
}

// Events is how many timeline events the recording holds.
func (s *ReplaySource) Events() int { return len(s.events) }

// The lines that step through a recording; the screen's [ and ] send them.
const (
	CmdStepForward = "step forward"
	CmdStepBack    = "step back"
)

// Exec paces the playback: pause, resume and speed, and step forward and
// step back. A recording cannot be changed, so every other command is
// refused.
func (s *ReplaySource) Exec(_ context.Context, o view.Order) (string, error) {
	if o.Line == CmdStepForward || o.Line == CmdStepBack {
		return s.step(o.Line == CmdStepForward), nil
	}
	cmd := o.Cmd
	if cmd == nil {
		return "", o.NotLabCommand()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.poke()
	defer s.signal()
	switch c := cmd.(type) {
	case command.Pause:
		if !s.paused {
			s.rec, s.paused = s.playedLocked(), true
		}
		return "the replay is paused: [ and ] step through what has played", nil
	case command.Resume:
		if s.pos == len(s.frames)-1 {
			return "", errors.New("the recording has ended: [ and ] step back through it")
		}
		if s.paused {
			s.paused, s.anchor = false, time.Now()
		}
		return "", nil
	case command.Speed:
		if c.Factor <= 0 {
			return "", fmt.Errorf("speed %v: the replay needs a speed above zero", c.Factor)
		}
		s.rec, s.anchor, s.speed = s.playedLocked(), time.Now(), c.Factor
		return fmt.Sprintf("the replay runs at %sx", trimSpeed(c.Factor)), nil
	}
	return "", fmt.Errorf("a recording cannot be changed: %s was not run", o.Line)
}

func trimSpeed(f float64) string { return fmt.Sprintf("%g", f) }

// step pauses the replay and moves one timeline event forward (or back).
// The panels show the last snapshot taken at or before that event: the
// recorder takes one at most every lab.SnapshotEvery, so between two of
// them the timeline moves on and the panels wait for the next.
func (s *ReplaySource) step(forward bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.poke()
	defer s.signal()
	if !s.paused {
		s.rec, s.paused = s.playedLocked(), true
	}
	switch {
	case forward && s.tl >= len(s.events):
		return "the end of the recording: [ steps back"
	case !forward && s.tl == 0:
		return "the start of the recording: ] steps forward, space plays"
	case forward:
		s.tl++
	default:
		s.tl--
	}
	// The frame to draw: the last whose events are all on screen.
	s.pos = 0
	for i, f := range s.frames {
		if f.tlEnd <= s.tl {
			s.pos = i
		}
	}
	s.shown, s.rec = false, s.frames[s.pos].at
	if s.tl == 0 {
		return "the start of the recording"
	}
	return s.events[s.tl-1].Text
}
