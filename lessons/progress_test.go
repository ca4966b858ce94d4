package lessons

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

func TestStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "mqlab", "progress.json")
	s, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.Load(); err != nil || len(p.Lessons) != 0 {
		t.Fatalf("a store without a file: %+v %v", p, err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.SetStep("durability", 3))
	must(s.Answer("durability", "s2.p1", 1, true))
	must(s.Answer("durability", "s2.p1", 0, false)) // the last answer counts
	must(s.SetStep("failover", 1))
	fo, err := Find("failover")
	must(err)
	must(s.Answer("failover", fo.Predictions()[0].ID, 2, true))
	must(s.Finish(fo, 14))

	again, _ := OpenStore(path) // another process, later
	lp, err := again.Lesson("durability")
	must(err)
	if lp.Step != 3 || lp.Finished || lp.Answers["s2.p1"] != (Answer{Choice: 0, Correct: false}) || lp.Updated.IsZero() {
		t.Errorf("durability: %+v", lp)
	}
	lp, _ = again.Lesson("failover")
	if !lp.Finished || lp.Step != 0 || lp.FinishedAt.IsZero() {
		t.Errorf("failover: %+v", lp)
	}
	if want := (Score{Right: 1, Predictions: len(fo.Predictions()), Held: 14, Expectations: fo.ExpectationCount()}); lp.Score == nil || *lp.Score != want {
		t.Errorf("failover's score is %+v; want %+v", lp.Score, want)
	}
	must(again.Reset("durability"))
	if lp, _ := again.Lesson("durability"); lp.Step != 0 || lp.Answers != nil {
		t.Errorf("after reset: %+v", lp)
	}
	// The file and the lock two processes share; no temporary file.
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 2 || entries[0].Name() != "progress.json" || entries[1].Name() != "progress.json.lock" {
		t.Errorf("temporary files left behind: %v", entries)
	}

	must(os.WriteFile(path, []byte("{not json"), 0o644))
	if _, err := again.Load(); err == nil {
		t.Error("a corrupt file loads without an error")
	}
}

func TestDefaultStorePathFollowsXDG(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	p, err := DefaultStorePath()
	if err != nil || p != filepath.Join(dir, "mqlab", "progress.json") {
		t.Fatalf("%q %v", p, err)
	}
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", home)
	p, err = DefaultStorePath()
	if err != nil || p != filepath.Join(home, ".local", "state", "mqlab", "progress.json") {
		t.Fatalf("%q %v", p, err)
	}
}

// Two processes keeping progress in one file at once (two stores over
// it here, each with its own lock) merge their changes: none is lost.
func TestStoresMergeTheirProgress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	a, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			if err := s.SetStep(fmt.Sprintf("lesson-%d", i), i); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	p, err := a.Load()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if lp := p.Lessons[fmt.Sprintf("lesson-%d", i)]; lp == nil || lp.Step != i {
			t.Errorf("lesson-%d: %+v, want step %d", i, lp, i)
		}
	}
}

// Choices are shown in an order of the learner's own: the same each time
// for one learner and lesson, and across learners the right answer lands
// in every position about as often.
func TestChoicesShuffledPerLearner(t *testing.T) {
	if a, b := ShownOrder("ann", "failover", "s2.p1", 3), ShownOrder("ann", "failover", "s2.p1", 3); !slices.Equal(a, b) {
		t.Fatalf("one learner saw %v, then %v", a, b)
	}
	where := map[int]int{}
	for i := range 300 {
		order := ShownOrder(fmt.Sprintf("learner-%d", i), "failover", "s2.p1", 3)
		where[slices.Index(order, 1)]++ // the file's b
	}
	for pos := range 3 {
		if where[pos] < 60 {
			t.Errorf("the right answer was shown at %c to %d of 300 learners; want about 100", 'a'+pos, where[pos])
		}
	}
	s, err := OpenStore(filepath.Join(t.TempDir(), "progress.json"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Learner()
	if err != nil || first == "" {
		t.Fatalf("Learner() = %q, %v", first, err)
	}
	if again, _ := s.Learner(); again != first {
		t.Errorf("the learner's name changed from %q to %q", first, again)
	}
}

// A challenge passed is kept, with how many schedules it passed on.
func TestStorePassChallenge(t *testing.T) {
	store, err := OpenStore(t.TempDir() + "/progress.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PassChallenge("at-least-once", 3); err != nil {
		t.Fatal(err)
	}
	p, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Challenges["at-least-once"]; got.Schedules != 3 || got.PassedAt.IsZero() {
		t.Errorf("kept %+v", got)
	}
}
