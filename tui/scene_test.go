package tui

import (
	"testing"
)

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
