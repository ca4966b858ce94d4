package lessons

import (
	"context"
	"slices"
	"sync"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/command"
)

// Status is where a lesson's step stands, as a Player plays it.
type Status int

const (
	StatusStarting Status = iota // the lab is replaying the lesson up to the step
	StatusPlaying                // the step's blocks are running
	StatusTask                   // a task waits for the learner
	StatusPredict                // a prediction waits for an answer
	StatusStepDone               // the step played and held: the next one may come
	StatusFailed                 // an expectation failed: the step cannot be passed
	StatusBroken                 // a command of the step could not run
	StatusFinished               // the last step is done
)

// Played is one block of a step as it played: narrative, the commands a
// lab block ran, a task, a prediction or the expectations of an expect
// block. Exactly the field of its Kind is set.
type Played struct {
	Kind       Kind
	Text       string          // KindText: Markdown, placeholders filled
	Commands   []CommandResult // KindLab
	Task       *PlayedTask
	Prediction *PlayedPrediction
	Expects    []ExpectResult // KindExpect
}

// PlayedTask is a task as the learner follows it.
type PlayedTask struct {
	Text string // placeholders filled: the goal
	Hint string // one way there, shown once the learner asks (HintShown)
	// HintShown: the learner asked for the hint (lesson hint).
	HintShown bool
	Done      bool
	// Waiting is, while the task waits, the first of its conditions that
	// does not hold yet with the values the lab shows: "hwm(orders/0@n1)
	// == 2000 (now 1500)".
	Waiting string
	// Tried: the learner ran what the task asks; the lab is getting there.
	Tried bool
	// Decide names what the learner chooses, when the task is a decision:
	// it ends when they say their choice is complete (n), not at the
	// first command that meets its goal.
	Decide string
	// Acted: the learner has run a command since the task opened.
	Acted bool
	// Chosen are the commands of the learner's choice for a decision, as
	// typed, that wait to run until they say it is complete.
	Chosen []string
}

// PlayedPrediction is a question, and once answered, its reveal.
type PlayedPrediction struct {
	Question string
	Choices  []string // in the order shown: shuffled for a learner with a store
	Chosen   int      // -1 until the learner answers (and for headless runs)
	Answer   int      // -1 until revealed
	Why      string   // once revealed
	// Numeric: the question asks for a number, not a choice. Chosen and
	// Answer are then 0 once answered and revealed; Given is what the
	// learner answered, Right the answer with its tolerance ("20 (± 4)"),
	// Correct whether Given was within it.
	Numeric bool
	Given   string
	Right   string
	Correct bool
	Number  *Number // the numeric answer, once revealed

	order []int // shown choice i is the file's choice order[i]
}

// State is a copy of where a Player stands: nothing in it is shared with
// the player.
type State struct {
	Step      int // from 0; len(Steps) once finished
	Steps     int
	StepTitle string
	Status    Status
	Blocks    []Played
	// Notice says what went off track and how to get back.
	Notice string
	// Failed lists this step's expectations that did not hold.
	Failed []ExpectResult
	// Err is why the step broke, while Status is StatusBroken.
	Err error
	// Held says why the player holds lab time still ("reading — any
	// command resumes"); "" when it does not.
	Held string
}

// PlayerOptions configure a Player.
type PlayerOptions struct {
	// Lab is the lab to play on; the player does not close it.
	Lab *lab.Lab
	// Progress keeps the step, the answers and whether the lesson was
	// finished. Nil keeps nothing.
	Progress *Store
	// Sandbox lets a step be passed although an expectation fails, a
	// task waits or a question is open.
	Sandbox bool
	// Auto plays as a headless run does: each task is done by running its
	// commands and each question is revealed unanswered.
	Auto bool
	// Observe, when set, hears of every step opened and block played, in
	// order, from the goroutine that played it.
	Observe func(Note)
	// Timing and Nodes are passed to the Runner (see Options).
	Timing string
	Nodes  int
}

// NoteKind says what a Note reports.
type NoteKind int

const (
	NoteStep     NoteKind = iota // a step opens: Step
	NoteBlock                    // a block played: Event
	NoteTaskDone                 // the pending task's goal holds: Event (its commands when Auto ran them)
	NoteReveal                   // a question was answered: Reveal
	NoteBroken                   // a command could not run: Err
)

// Note is what a Player tells its observer.
type Note struct {
	Kind   NoteKind
	Step   int
	Event  Event
	Reveal Reveal
	Err    error
}

// Player plays a lesson on a lab for a screen or a transcript: the one
// loop that turns a Runner's blocks into a step as it has played. It runs
// the step in a goroutine it owns, stops at a prediction until Answer, and
// at a task waits until the learner's key or typed command makes the
// task's goal hold (or, with Auto, does the task itself), then plays on.
//
// Its commands — Goto, Next, Prev, Reset, Answer — take turns, return once
// the step stops for the learner, ends or breaks, and stop part-way when
// their ctx ends. State may be read from any goroutine meanwhile.
type Player struct {
	run  *Runner
	les  *Lesson
	opts PlayerOptions

	base   context.Context
	cancel context.CancelFunc

	// cmd is held by a player command for its whole run: they take turns.
	// The runner is driven by the command holding cmd while no goroutine
	// plays, or by the goroutine.
	cmd sync.Mutex

	mu      sync.Mutex
	st      playerState
	bg      *playing
	changed chan struct{} // closed and replaced on every change of st
	signal  chan struct{} // coalesced: something changed
	closed  bool
	once    sync.Once
	learner string // the store's learner, once read (choiceOrder)
}

// playing is the goroutine playing the step.
type playing struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// playerState is what the player keeps as the step plays.
type playerState struct {
	step   int
	status Status
	blocks []Played
	notice string
	err    error
	// failed: the step's expectations that did not hold, once it ended
	failed []ExpectResult
	// learner: what the learner ran during this step, for "what happened"
	learner []string
	// task: the pending task as the lesson wrote it, while one waits
	task *Task
	// offTrack says what the learner ran that the task does not ask for
	offTrack string
	// tried: the learner ran what the task asks
	tried bool
	// preview is the step's opening text, shown while the lab replays the
	// lesson up to the step, so the learner can read on meanwhile
	preview string
	// held says why the player holds lab time, "" when it does not;
	// paused: the player stopped the clock for it, so letting go starts it
	// again (a decision also holds a clock the lesson had stopped, which
	// it leaves stopped)
	held   hold
	paused bool
	// taskFrom is len(learner) when the open task opened; decided: the
	// learner said their choice for a decision task is complete
	taskFrom    int
	outsideFrom int // Lab.OutsideActions when the open task opened
	decided     bool
	// chosen: the commands of the learner's choice for the open decision,
	// which wait while the lab holds still for it (see choosing)
	chosen []command.Command
}

// hold is why the player paused lab time. A screen plays a lesson for a
// person, who reads: the lab holds still from the moment a question, a
// task or the end of a step is shown, so nothing moves on screen that the
// text has not asked about or shown yet. A question holds it until the
// answer; a task and a step's end until the learner acts: any command
// that changes the lab (a key or a typed line) lets it run, and so does
// moving to another step or, while a task waits, a request from the
// learner's own client (Lab.OutsideActions). A decision holds it until
// the learner says their choice is complete, and what they type for it
// waits until then (Player.choosing), also when the lesson had stopped
// the clock itself before it, or the learner stops it during the decision
// after a resume (Player.pausedToDecide). A headless play (Auto) never
// holds.
type hold string

const (
	holdQuestion hold = "question"
	holdTask     hold = "task"
	holdReading  hold = "reading"
	holdDecision hold = "decision"
)

// words is what the screen says of the hold beside PAUSED.
func (h hold) words() string {
	switch h {
	case holdQuestion:
		return "the question is open — answer it and time runs on"
	case holdTask:
		return "your turn — any command resumes"
	case holdReading:
		return "reading — any command resumes"
	case holdDecision:
		return "deciding — your commands wait for n"
	}
	return ""
}

func (st *playerState) open(step int, status Status, notice string) {
	*st = playerState{step: step, status: status, notice: notice}
}

// NewPlayer prepares les on opts.Lab (or on a lab of its own when that is
// nil, which Close closes). Nothing plays until Goto.
func NewPlayer(les *Lesson, opts PlayerOptions) (*Player, error) {
	run, err := NewRunner(les, Options{Lab: opts.Lab, Progress: opts.Progress, Timing: opts.Timing, Nodes: opts.Nodes})
	if err != nil {
		return nil, err
	}
	p := &Player{run: run, les: les, opts: opts,
		changed: make(chan struct{}), signal: make(chan struct{}, 1)}
	p.base, p.cancel = context.WithCancel(context.Background())
	p.st.status = StatusStarting
	return p, nil
}

// Lesson returns the lesson played.
func (p *Player) Lesson() *Lesson { return p.les }

// Lab returns the lab the lesson plays on.
func (p *Player) Lab() *lab.Lab { return p.run.Lab() }

// Changes signals, coalesced, that the state moved. It is closed by Close.
func (p *Player) Changes() <-chan struct{} { return p.signal }

// Close stops the goroutine and any player command, returns when they are
// gone, and closes the lab if the player made it.
func (p *Player) Close() error {
	var err error
	p.once.Do(func() {
		p.cancel()
		p.stopPlaying()
		p.cmd.Lock() // a command that was running has seen the cancel and returned
		//nolint:staticcheck // an empty critical section: waiting is the point
		p.cmd.Unlock()
		p.mu.Lock()
		p.closed = true
		close(p.signal)
		p.mu.Unlock()
		err = p.run.Close()
	})
	return err
}

// update changes the state under the lock and signals the change.
func (p *Player) update(fn func(st *playerState)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fn(&p.st)
	close(p.changed)
	p.changed = make(chan struct{})
	if !p.closed {
		select {
		case p.signal <- struct{}{}:
		default:
		}
	}
}

func (p *Player) state() (playerState, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st, p.changed
}

// State returns a copy of where the player stands. While a task waits,
// its Waiting says what for, read from the lab now (until the player
// closes), and Notice what the learner ran off the task's path or a node
// the goal needs that is down.
func (p *Player) State() State {
	ctx := p.base
	// The blocks are cloned under the lock: a reveal writes the played
	// prediction they point to (revealed), from the goroutine answering.
	p.mu.Lock()
	st := p.st
	blocks := make([]Played, len(st.blocks))
	for i, b := range st.blocks {
		blocks[i] = b.clone()
	}
	p.mu.Unlock()
	out := State{Step: st.step, Steps: len(p.les.Steps), Status: st.status,
		Notice: st.notice, Err: st.err, Failed: slices.Clone(st.failed), Held: st.held.words()}
	if st.step < len(p.les.Steps) {
		out.StepTitle = p.les.Steps[st.step].Title
	} else {
		out.StepTitle = "Finished"
	}
	if st.status == StatusStarting && len(st.blocks) == 0 && st.preview != "" {
		out.Blocks = []Played{{Kind: KindText, Text: st.preview}}
	}
	out.Blocks = append(out.Blocks, blocks...)
	if st.status == StatusTask && st.task != nil {
		if w := p.waiting(ctx, st.task); w != "" {
			if t := lastOpenTask(out.Blocks); t != nil {
				t.Waiting, t.Tried = w, st.tried
			}
		}
		if blocked := p.blocked(ctx, st.task); blocked != "" || st.offTrack != "" {
			how := "If the lab can no longer get there, :lesson reset starts the step again."
			if blocked != "" {
				how = ":lesson reset starts the step again."
			}
			out.Notice = joinNotes(st.offTrack, blocked, how)
		}
	}
	return out
}

func (b Played) clone() Played {
	c := b
	c.Commands = slices.Clone(b.Commands)
	c.Expects = slices.Clone(b.Expects)
	if b.Task != nil {
		t := *b.Task
		t.Chosen = slices.Clone(t.Chosen)
		c.Task = &t
	}
	if b.Prediction != nil {
		pr := *b.Prediction
		pr.Choices = slices.Clone(pr.Choices)
		pr.order = slices.Clone(pr.order)
		c.Prediction = &pr
	}
	return c
}

// lastOpenTask is the last task of blocks not done yet, or nil.
func lastOpenTask(blocks []Played) *PlayedTask {
	for i := len(blocks) - 1; i >= 0; i-- {
		if b := blocks[i]; b.Kind == KindTask && !b.Task.Done {
			return b.Task
		}
	}
	return nil
}

func (p *Player) observe(n Note) {
	if p.opts.Observe != nil {
		p.opts.Observe(n)
	}
}
