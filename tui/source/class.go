package source

// A class: the teacher's screen shared with students who follow it,
// read-only, and the students' answers to the teacher's questions.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/view"
)

// Class is a teacher's lab shared with the students who follow it. The
// teacher's screen reads its source through Share, which hands every
// state it draws to the class; a follower's screen reads that same state
// through Follow and never reaches the lab. However many follow, the lab
// is read once a frame, by the teacher's screen.
//
// A person is who a student is, whatever session they come in by: their
// SSH user and key, or a name. One person has one vote on a question,
// however many sessions they open; a person who leaves takes their vote
// with them, and answers again if they come back.
type Class struct {
	mu      sync.Mutex
	view    view.State
	sharing bool
	// answers: for each question, each person's answer.
	answers map[string]map[string]lessons.Said
	subs    map[*Follower]chan struct{}
	seats   map[*Seat]bool
	// revealed: the questions whose answer was on screen.
	revealed map[string]bool
}

// NewClass makes a class with nothing shared yet.
func NewClass() *Class {
	return &Class{answers: map[string]map[string]lessons.Said{}, subs: map[*Follower]chan struct{}{}, seats: map[*Seat]bool{},
		revealed: map[string]bool{}}
}

// Seat is one session in the class: a student with a lab of their own,
// or one who follows the teacher's (see Follower).
type Seat struct {
	c       *Class
	person  string
	name    string
	follows bool
	once    sync.Once
}

// Join adds a session of person's, shown as name, that has a lab of its
// own: the teacher's roster counts it. Leave when it ends.
func (c *Class) Join(person, name string) *Seat {
	st := &Seat{c: c, person: person, name: name}
	c.mu.Lock()
	c.seats[st] = true
	c.mu.Unlock()
	c.signal()
	return st
}

// Rename shows the session to the teacher as name from now on: a
// student who typed theirs.
func (st *Seat) Rename(name string) {
	st.c.mu.Lock()
	st.name = name
	st.c.mu.Unlock()
	st.c.signal()
}

// Leave takes the session out of the class. When it was the person's
// last, their answers go: the tally counts the people who are there.
func (st *Seat) Leave() {
	st.once.Do(func() {
		c := st.c
		c.mu.Lock()
		delete(c.seats, st)
		if !c.presentLocked(st.person) {
			for _, byPerson := range c.answers {
				delete(byPerson, st.person)
			}
		}
		c.mu.Unlock()
		c.signal()
	})
}

// presentLocked says whether person has a session in the class.
func (c *Class) presentLocked(person string) bool {
	for s := range c.seats {
		if s.person == person {
			return true
		}
	}
	return false
}

// followingLocked is the people who follow the teacher's lab now.
func (c *Class) followingLocked() map[string]bool {
	out := map[string]bool{}
	for s := range c.seats {
		if s.follows {
			out[s.person] = true
		}
	}
	return out
}

// Share returns src as the teacher's screen reads it: every state it
// draws goes to the followers, and an open question carries the class's
// tally. Close the share when the screen closes.
func (c *Class) Share(src view.Source) *Shared { return &Shared{c: c, src: src} }

// Shared is the teacher's source, shared with the class.
type Shared struct {
	c   *Class
	src view.Source
}

// View reads the teacher's lab, publishes it, and adds the class's tally
// to an open question.
func (s *Shared) View() view.State {
	v := s.src.View()
	s.c.publish(ownCopy(v))
	var tally *view.ClassTally
	if les := v.Lesson; les != nil && les.Prediction != nil {
		l := *les
		p := *les.Prediction
		tally = s.c.tally(questionKey(&l), len(p.Choices), p.Numeric)
		p.Class = tally
		l.Prediction = &p
		l.Blocks = withPrediction(l.Blocks, &p)
		v.Lesson = &l
	}
	v.Class = s.c.roster(v.Lesson, tally)
	return v
}

// CmdReveal reveals the open question's answer on the teacher's shared
// screen without the teacher answering it: the class answered on theirs.
const CmdReveal = "reveal"

// revealer is a source whose open question can be revealed unanswered.
type revealer interface {
	Reveal(ctx context.Context) (string, error)
}

// Exec runs the teacher's command; "reveal" reveals the open question.
func (s *Shared) Exec(ctx context.Context, o view.Order) (string, error) {
	if strings.TrimSpace(o.Line) == CmdReveal {
		r, ok := s.src.(revealer)
		if !ok {
			return "", errors.New("reveal shows a lesson's answer, and no lesson is open")
		}
		return r.Reveal(ctx)
	}
	return s.src.Exec(ctx, o)
}

// Changes is the teacher's source's.
func (s *Shared) Changes() <-chan struct{} { return s.src.Changes() }

// Close stops sharing: followers see that the teacher has no lab open.
func (s *Shared) Close() {
	s.c.mu.Lock()
	s.c.sharing = false
	s.c.view = view.State{}
	s.c.mu.Unlock()
	s.c.signal()
}

func (c *Class) publish(v view.State) {
	c.mu.Lock()
	c.view, c.sharing = v, true
	if les := v.Lesson; les != nil && les.Prediction != nil {
		// A question asked again (the teacher stepped back to it) is a
		// new asking: the answers to its last one are not locked in.
		key := questionKey(les)
		switch {
		case les.Prediction.Answer >= 0:
			c.revealed[key] = true
		case c.revealed[key]:
			delete(c.revealed, key)
			delete(c.answers, key)
		}
	}
	c.mu.Unlock()
	c.signal()
}

func (c *Class) signal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range c.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// tally counts the followers' answers to a question.
func (c *Class) tally(key string, choices int, numeric bool) *view.ClassTally {
	c.mu.Lock()
	defer c.mu.Unlock()
	following := c.followingLocked()
	t := &view.ClassTally{Counts: make([]int, choices), Following: len(following), Numeric: numeric}
	for person, a := range c.answers[key] {
		if !following[person] {
			continue
		}
		switch {
		case numeric:
			t.Numbers = append(t.Numbers, a.Number)
			t.Answered++
		case a.Choice >= 0 && a.Choice < choices:
			t.Counts[a.Choice]++
			t.Answered++
		}
	}
	slices.Sort(t.Numbers)
	return t
}

// roster is who is in the class, for the teacher's screen, with the
// answers to the question on screen (tally, nil when there is none).
func (c *Class) roster(les *view.Lesson, tally *view.ClassTally) *view.Roster {
	c.mu.Lock()
	defer c.mu.Unlock()
	var answered map[string]lessons.Said
	if les != nil && les.Prediction != nil {
		answered = c.answers[questionKey(les)]
	}
	byPerson := map[string]*view.Student{}
	var order []string
	for s := range c.seats {
		st := byPerson[s.person]
		if st == nil {
			st = &view.Student{Name: s.name}
			byPerson[s.person] = st
			order = append(order, s.person)
		}
		st.Sessions++
		st.Follows = st.Follows || s.follows
		_, st.Answered = answered[s.person]
	}
	slices.SortFunc(order, func(a, b string) int { return strings.Compare(byPerson[a].Name+"\x00"+a, byPerson[b].Name+"\x00"+b) })
	r := &view.Roster{}
	for _, p := range order {
		r.Students = append(r.Students, *byPerson[p])
	}
	if tally != nil {
		r.Question, r.Answered, r.Following = true, tally.Answered, tally.Following
	}
	return r
}

// Followers is how many people follow the class now.
func (c *Class) Followers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.followingLocked())
}

// Students is how many people are connected, following or not.
func (c *Class) Students() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	people := map[string]bool{}
	for s := range c.seats {
		people[s.person] = true
	}
	return len(people)
}

// Follow adds a session of person's, shown as name, that follows the
// teacher's lab: their screen reads the teacher's through the Follower,
// which they Close when they leave.
func (c *Class) Follow(person, name string) *Follower {
	f := &Follower{c: c, seat: &Seat{c: c, person: person, name: name, follows: true}, ch: make(chan struct{}, 1)}
	c.mu.Lock()
	c.subs[f] = f.ch
	c.seats[f.seat] = true
	c.mu.Unlock()
	c.signal() // the teacher's tally counts one more
	return f
}

// Follower is a student's source: the teacher's screen, read-only.
type Follower struct {
	c    *Class
	seat *Seat
	ch   chan struct{}
	once sync.Once
}

// ErrReadOnly is what a follower's command gets: the lab is the teacher's.
var ErrReadOnly = errors.New("you follow the teacher's lab, which only the teacher changes: " +
	"watch, step back through history with [ and ], and answer the questions with their letters or numbers")

// FollowerTakes says whether a follower's screen sends an order on to
// the class: an answer (predict b) or a request for help.
func FollowerTakes(o view.Order) bool {
	if said, ok := lessons.PredictAnswer(o.Line); ok && said != "" {
		return true
	}
	_, ok := o.Cmd.(command.Help)
	return ok
}

// followerHelp is what help says on a follower's screen.
const followerHelp = `You follow the teacher's lab: you see it live, and only the teacher changes it.

What you can do:
  a–d, or predict b     answer the question on screen with its letter
  0–9, or predict 40    answer a question that asks for a number
  [ ]  { }              step back and forth through what happened; esc returns to live
  tab, ↑/↓              move between panels, scroll one
  ?                     every key
  help COMMAND          what a command the teacher runs does, e.g. help kill
  q                     leave

Your answer counts once, and stays until the teacher reveals the question.`

// View is the teacher's screen as last drawn, with this student's own
// answer to the open question (and, once the teacher reveals it, whether
// it was right).
func (f *Follower) View() view.State {
	f.c.mu.Lock()
	v, sharing := f.c.view, f.c.sharing
	var mine lessons.Said
	var answered bool
	if v.Lesson != nil && v.Lesson.Prediction != nil {
		mine, answered = f.c.answers[questionKey(v.Lesson)][f.seat.person]
	}
	f.c.mu.Unlock()
	if !sharing {
		return view.State{}
	}
	v = ownCopy(v)
	if v.Lesson != nil && v.Lesson.Prediction != nil {
		les := *v.Lesson
		p := *les.Prediction
		if p.Answer >= 0 { // revealed: the class sees how it split
			p.Class = f.c.tally(questionKey(&les), len(p.Choices), p.Numeric)
		}
		p.Chosen, p.Given, p.Correct = -1, "", false
		switch {
		case answered && p.Numeric:
			p.Chosen, p.Given = 0, lessons.FormatNumber(mine.Number)
			p.Correct = mine.Right(-1, p.Number)
		case answered:
			p.Chosen = mine.Choice
		}
		les.Prediction = &p
		les.Blocks = withPrediction(les.Blocks, &p)
		v.Lesson = &les
	}
	return v
}

// Exec takes one command: the answer to the teacher's open question
// ("predict b"). Anything else would change the teacher's lab.
func (f *Follower) Exec(_ context.Context, o view.Order) (string, error) {
	if h, ok := o.Cmd.(command.Help); ok {
		if h.Topic == "" {
			return followerHelp, nil
		}
		sp, ok := command.Lookup(h.Topic)
		if !ok {
			return "", fmt.Errorf("there is no command %q: help lists what you can do", h.Topic)
		}
		return sp.Detail() + "\nOnly the teacher runs it on this lab.", nil
	}
	said, ok := lessons.PredictAnswer(o.Line)
	if !ok || said == "" {
		return "", ErrReadOnly
	}
	numeric, err := f.c.answer(f.seat.person, said)
	if err != nil {
		return "", err
	}
	f.c.signal() // the teacher's tally and this screen both change
	if numeric {
		return fmt.Sprintf("you said %s — the teacher reveals the answer", said), nil
	}
	return fmt.Sprintf("you chose %s) — the teacher reveals the answer", said), nil
}

// answer records who's answer to the open question: a letter, or a
// number when it asks for one (numeric says which it was).
func (c *Class) answer(who, said string) (numeric bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	les := c.view.Lesson
	pr := openQuestion(les)
	if pr == nil {
		if les != nil && les.Prediction != nil {
			return false, errors.New("the teacher has revealed this question's answer already")
		}
		return false, errors.New("no question is open now")
	}
	a, err := lessons.ParseAnswer(said, len(pr.Choices), pr.Numeric)
	if err != nil {
		return pr.Numeric, err
	}
	key := questionKey(les)
	if c.answers[key] == nil {
		c.answers[key] = map[string]lessons.Said{}
	}
	if had, ok := c.answers[key][who]; ok {
		mine := fmt.Sprintf("%c)", 'a'+had.Choice)
		if pr.Numeric {
			mine = lessons.FormatNumber(had.Number)
		}
		return pr.Numeric, fmt.Errorf("you answered %s already, and an answer stays until the teacher reveals the question", mine)
	}
	c.answers[key][who] = a
	return pr.Numeric, nil
}

// Changes signals a new state of the teacher's screen.
func (f *Follower) Changes() <-chan struct{} { return f.ch }

// Close takes the student out of the class.
func (f *Follower) Close() {
	f.once.Do(func() {
		f.c.mu.Lock()
		delete(f.c.subs, f)
		f.c.mu.Unlock()
		f.seat.Leave()
	})
}

// openQuestion is the lesson's question waiting for the teacher's answer,
// or nil.
func openQuestion(les *view.Lesson) *view.Prediction {
	if les == nil || les.Prediction == nil || les.Prediction.Chosen >= 0 || les.Prediction.Answer >= 0 {
		return nil
	}
	return les.Prediction
}

// questionKey names a lesson's question for the tally.
func questionKey(les *view.Lesson) string {
	return fmt.Sprintf("%s\x00%d\x00%s", les.ID, les.Step, les.Prediction.Question)
}

// withPrediction is blocks with the last prediction block (the same
// question) showing p instead; the slice is new, the others shared.
func withPrediction(blocks []view.LessonBlock, p *view.Prediction) []view.LessonBlock {
	for i := len(blocks) - 1; i >= 0; i-- {
		if b := blocks[i]; b.Kind == view.BlockPrediction && b.Prediction != nil && b.Prediction.Question == p.Question {
			out := slices.Clone(blocks)
			out[i].Prediction = p
			return out
		}
	}
	return blocks
}

// ownCopy is v with its own copy of everything a screen changes in the
// state it reads: the history ring points a new state's unchanged log
// windows, table rows and series at the last state's (history.share), and
// a screen dates an undated truncation in place (Model.noticeChanges).
// The teacher's screen and every follower's read one published state, so
// each gets its own containers; the entries, rows and values they hold are
// never written and stay shared.
func ownCopy(v view.State) view.State {
	v.Partitions = slices.Clone(v.Partitions)
	for i := range v.Partitions {
		p := &v.Partitions[i]
		p.Replicas = slices.Clone(p.Replicas)
		for j := range p.Replicas {
			if t := p.Replicas[j].Truncation; t != nil {
				tc := *t
				p.Replicas[j].Truncation = &tc
			}
		}
	}
	v.Tables = slices.Clone(v.Tables)
	v.Charts.Series = slices.Clone(v.Charts.Series)
	v.Charts.Retries = slices.Clone(v.Charts.Retries)
	return v
}
