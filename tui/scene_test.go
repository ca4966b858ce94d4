package tui

import (
	"compress/gzip"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

// The screen's tests draw a real lab: testdata/scene.mqlab, recorded once
// into testdata/scene.jsonl.gz and played back through the replay
// source's frames. To record it again (and then the goldens):
//
//	go test ./tui -run TestRecordScene -record
//	go test ./tui -update

var recordScene = flag.Bool("record", false, "record testdata/scene.jsonl.gz again from testdata/scene.mqlab on a real lab")

const sceneRecording = "testdata/scene.jsonl.gz"

// TestRecordScene records the scene; without -record there is nothing
// for it to do.
func TestRecordScene(t *testing.T) {
	if !*recordScene {
		t.Skip("records the scene only with -record")
	}
	src, err := os.ReadFile(filepath.Join("testdata", "scene.mqlab"))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := command.ParseScript(string(src))
	if err != nil {
		t.Fatal(err)
	}
	l, err := lab.New(lab.Options{Timing: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f, err := os.Create(sceneRecording)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	rec := lab.NewRecorder(l, zw)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	failed := l.RunScript(ctx, lines, nil)
	for _, err := range []error{lab.ScriptError(failed), rec.Close(), zw.Close(), f.Close()} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

var sceneOnce struct {
	sync.Once
	src *source.ReplaySource
	err error
}

// scene is the recorded scene, read once.
func scene(t testing.TB) *source.ReplaySource {
	t.Helper()
	sceneOnce.Do(func() {
		f, err := os.Open(sceneRecording)
		if err != nil {
			sceneOnce.err = err
			return
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			sceneOnce.err = err
			return
		}
		sceneOnce.src, sceneOnce.err = source.ReadReplay(zr)
	})
	if sceneOnce.err != nil {
		t.Fatalf("the recorded scene: %v (TestRecordScene -record records it)", sceneOnce.err)
	}
	return sceneOnce.src
}

// sceneView draws frame i of the scene afresh: the caller may change it.
func sceneView(t testing.TB, i int) view.State {
	v := scene(t).Frame(i)
	v.Clock = view.Clock{Speed: 1}
	return v
}

// sceneEnd is the scene's last frame: the leader of orders/0 killed and
// replaced at a higher epoch, and back with its uncommitted tail cut.
// Each call returns a copy the caller may change.
func sceneEnd(t testing.TB) view.State { return sceneView(t, scene(t).Frames()-1) }

// sceneFrame is the index of the first frame whose timeline has a line
// of kind that contains text.
func sceneFrame(t testing.TB, kind, text string) int {
	t.Helper()
	for i := range scene(t).Frames() {
		for _, l := range sceneView(t, i).Timeline {
			if l.Kind == kind && strings.Contains(l.Text, text) {
				return i
			}
		}
	}
	t.Fatalf("no frame of the scene ends its timeline with %s %q", kind, text)
	return 0
}

// sceneSource steps through the scene's frames, as a live lab's source
// moves, and records every line run on it.
type sceneSource struct {
	*fakeSource
	t   testing.TB
	pos int
}

func newSceneSource(t testing.TB, from int) *sceneSource {
	return &sceneSource{fakeSource: newFakeSource(sceneView(t, from)), t: t, pos: from}
}

// step moves n frames on (to the last at most) and signals the change.
func (s *sceneSource) step(n int) { s.goTo(min(s.pos+n, scene(s.t).Frames()-1)) }

// goTo shows frame i and signals the change.
func (s *sceneSource) goTo(i int) {
	s.pos = i
	v := sceneView(s.t, s.pos)
	s.mu.Lock()
	s.state = v
	s.mu.Unlock()
	select {
	case s.ch <- struct{}{}:
	default:
	}
}
