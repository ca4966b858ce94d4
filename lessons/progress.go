package lessons

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Progress is what a learner has done, lesson by lesson.
type Progress struct {
	Version int                        `json:"version"`
	Lessons map[string]*LessonProgress `json:"lessons"`
	// Learner is a random name for this learner, made once: it seeds the
	// order a prediction's choices are shown in, the same every time for
	// the same learner and lesson, and different from one learner to the
	// next.
	Learner string `json:"learner,omitempty"`
	// Challenges are the challenges passed, by id: when, and on how many
	// schedules.
	Challenges map[string]ChallengeProgress `json:"challenges,omitempty"`
}

// ChallengeProgress is a challenge passed.
type ChallengeProgress struct {
	PassedAt  time.Time `json:"passed_at"`
	Schedules int       `json:"schedules"`
}

// PassChallenge records that the learner's program passed challenge id
// on that many schedules.
func (s *Store) PassChallenge(id string, schedules int) error {
	return s.change(func(p *Progress) {
		if p.Challenges == nil {
			p.Challenges = map[string]ChallengeProgress{}
		}
		p.Challenges[id] = ChallengeProgress{PassedAt: time.Now().UTC(), Schedules: schedules}
	})
}

// LessonProgress is one lesson's progress.
type LessonProgress struct {
	Step       int               `json:"step"` // the step to come back to, from 0
	Finished   bool              `json:"finished,omitempty"`
	FinishedAt time.Time         `json:"finished_at,omitzero"`
	Answers    map[string]Answer `json:"answers,omitempty"` // by Predict.ID
	Updated    time.Time         `json:"updated,omitzero"`
	// Score is the last finish's: predictions right and expectations held.
	Score *Score `json:"score,omitempty"`
}

// Score is how a lesson went, kept at its finish.
type Score struct {
	Right        int `json:"right"`        // predictions answered right
	Predictions  int `json:"predictions"`  // predictions in the lesson
	Held         int `json:"held"`         // expectations that held
	Expectations int `json:"expectations"` // expectations in the lesson
}

// String is the score as the lesson list and a lesson's end say it.
func (s Score) String() string {
	return fmt.Sprintf("%d of %d predicted right, %d of %d expectations held", s.Right, s.Predictions, s.Held, s.Expectations)
}

// Answer is the learner's answer to one prediction (the last one given).
type Answer struct {
	Choice  int      `json:"choice"`           // -1 for a numeric prediction
	Number  *float64 `json:"number,omitempty"` // a numeric prediction's answer
	Correct bool     `json:"correct"`
}

// Store keeps progress in one JSON file, written whole and renamed into
// place so a crash never leaves half a file. Every change reads the file,
// changes one lesson and writes it back under a lock that other processes
// take too, so two mqlab running at once merge their progress instead of
// one overwriting the other's. Its methods are safe for concurrent use.
type Store struct {
	path string
	mu   sync.Mutex
}

// DefaultStorePath is progress.json in mqlab's XDG state directory:
// $XDG_STATE_HOME/mqlab, or ~/.local/state/mqlab.
func DefaultStorePath() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("progress: no state directory: %w", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "mqlab", "progress.json"), nil
}

// OpenStore returns a store over the file at path; the file need not
// exist yet. An empty path means DefaultStorePath.
func OpenStore(path string) (*Store, error) {
	if path == "" {
		p, err := DefaultStorePath()
		if err != nil {
			return nil, err
		}
		path = p
	}
	return &Store{path: path}, nil
}

// Path returns the file the store uses.
func (s *Store) Path() string { return s.path }

// Load returns all progress; a store whose file does not exist yet is empty.
func (s *Store) Load() (Progress, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.load()
}

// Lesson returns one lesson's progress (zero when never started).
func (s *Store) Lesson(id string) (LessonProgress, error) {
	p, err := s.Load()
	if err != nil {
		return LessonProgress{}, err
	}
	if lp := p.Lessons[id]; lp != nil {
		return *lp, nil
	}
	return LessonProgress{}, nil
}

// SetStep records the step a learner is at.
func (s *Store) SetStep(id string, step int) error {
	return s.update(id, func(lp *LessonProgress) { lp.Step = step })
}

// Answer records an answer to a prediction.
func (s *Store) Answer(id, predict string, choice int, correct bool) error {
	return s.update(id, func(lp *LessonProgress) {
		if lp.Answers == nil {
			lp.Answers = map[string]Answer{}
		}
		lp.Answers[predict] = Answer{Choice: choice, Correct: correct}
	})
}

// AnswerNumber records the answer to a numeric prediction.
func (s *Store) AnswerNumber(id, predict string, x float64, correct bool) error {
	return s.update(id, func(lp *LessonProgress) {
		if lp.Answers == nil {
			lp.Answers = map[string]Answer{}
		}
		lp.Answers[predict] = Answer{Choice: -1, Number: &x, Correct: correct}
	})
}

// Finish marks a lesson finished; the next start begins at its first
// step. The score counts the answers kept for les's predictions; held is
// how many of its expectations held.
func (s *Store) Finish(les *Lesson, held int) error {
	return s.update(les.ID, func(lp *LessonProgress) {
		lp.Finished, lp.FinishedAt, lp.Step = true, time.Now().UTC(), 0
		sc := Score{Held: held, Expectations: les.ExpectationCount()}
		for _, pr := range les.Predictions() {
			sc.Predictions++
			if a, ok := lp.Answers[pr.ID]; ok && a.Correct {
				sc.Right++
			}
		}
		lp.Score = &sc
	})
}

// Learner returns the learner's name, making one the first time.
func (s *Store) Learner() (string, error) {
	unlock, err := s.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	p, err := s.load()
	if err != nil {
		return "", err
	}
	if p.Learner == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("progress: %w", err)
		}
		p.Learner = hex.EncodeToString(b[:])
		if err := s.save(p); err != nil {
			return "", err
		}
	}
	return p.Learner, nil
}

// Reset forgets a lesson's progress.
func (s *Store) Reset(id string) error {
	return s.change(func(p *Progress) { delete(p.Lessons, id) })
}

// update changes one lesson's progress, and notes when.
func (s *Store) update(id string, fn func(*LessonProgress)) error {
	return s.change(func(p *Progress) {
		lp := p.Lessons[id]
		if lp == nil {
			lp = &LessonProgress{}
			p.Lessons[id] = lp
		}
		fn(lp)
		lp.Updated = time.Now().UTC()
	})
}

// change reads the progress, lets fn change it and writes it back, all
// under the store's lock.
func (s *Store) change(fn func(*Progress)) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	p, err := s.load()
	if err != nil {
		return err
	}
	fn(&p)
	return s.save(p)
}

// lock holds the store for one read, change and write: against other
// goroutines and against other processes.
func (s *Store) lock() (func(), error) {
	s.mu.Lock()
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("progress: %w", err)
	}
	release, err := lockFile(s.path + ".lock")
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	return func() { release(); s.mu.Unlock() }, nil
}

func (s *Store) load() (Progress, error) {
	p := Progress{Version: 1, Lessons: map[string]*LessonProgress{}}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("progress: %w", err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return Progress{Version: 1, Lessons: map[string]*LessonProgress{}}, fmt.Errorf("progress: %s: %w", s.path, err)
	}
	if p.Lessons == nil {
		p.Lessons = map[string]*LessonProgress{}
	}
	return p, nil
}

func (s *Store) save(p Progress) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".progress-*.json")
	if err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("progress: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("progress: %w", err)
	}
	return nil
}
