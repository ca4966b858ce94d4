package tui

import (
	"math/rand"
	"testing"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/draw"
)

// Random keys and sizes over the lesson pane in every status, and over the
// picker: nothing panics and every frame fills the window exactly.
func TestRandomInputLessonAndPicker(t *testing.T) {
	rnd := rand.New(rand.NewSource(7))
	keys := []string{"n", "p", "a", "b", "c", "k", "tab", "shift+tab", "up", "down", "enter", "esc", "?", "backspace",
		"r", "j", "g", "G", "x", "home", "end"}
	v := sceneEnd(t)
	v.Lesson = lessonBlocksState()
	src := newFakeSource(v)
	m := New(src, Options{BackToLessons: true})
	t.Cleanup(m.Close)
	p := newPicker(draw.NewStyles(draw.DefaultTheme), pickerLessons(), pickerProgress(), "")
	w, h := 100, 30
	m.Update(teaSize(w, h))
	p.setSize(w, h)
	for i := 0; i < 4000; i++ {
		if rnd.Intn(10) == 0 {
			w, h = 20+rnd.Intn(200), 5+rnd.Intn(70)
			m.Update(teaSize(w, h))
			p.setSize(w, h)
		}
		if rnd.Intn(20) == 0 {
			src.mu.Lock()
			ls := lessonBlocksState()
			ls.Status = lessons.Status(rnd.Intn(int(lessons.StatusFinished) + 1))
			ls.Blocks = ls.Blocks[:rnd.Intn(len(ls.Blocks)+1)]
			src.state.Lesson = ls
			src.mu.Unlock()
			m.Update(changeMsg{})
		}
		k := keyMsg(keys[rnd.Intn(len(keys))])
		m.Update(k)
		p.update(k)
		if i%5 == 0 {
			if w >= MinWidth && h >= MinHeight {
				checkSize(t, "lesson screen", m.View(), w, h)
				checkSize(t, "picker", p.View(), w, h)
			} else {
				m.View()
				p.View()
			}
		}
	}
}
