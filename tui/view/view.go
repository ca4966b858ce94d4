package view

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lessons"
)

// Source is everything the screen needs from a running lab (or a
// recording). The TUI never reaches past it: the lab adapter turns a lab
// snapshot into a State, and every key that changes the lab becomes one
// lab command for Exec, the same command a learner could type at the ':'
// prompt.
type Source interface {
	// View returns the state to draw now, as plain values the TUI may keep:
	// it is stored in the history ring, so it must share no memory that the
	// source later changes.
	View() State
	// Exec runs one order (kill n2, speed 2x, lesson next) and returns its
	// output. An error is shown to the learner as it is, so it should read
	// as a sentence.
	Exec(ctx context.Context, o Order) (string, error)
	// Changes signals that View has something new. The source coalesces:
	// a buffered channel of one, sent to without blocking, is enough. The
	// TUI re-reads View at most about 20 times a second. Nil means the state
	// never changes (a fixed picture).
	Changes() <-chan struct{}
}

// Order is one command for a Source: a lab command, parsed once (by the
// prompt) or built by a key, or a line the source reads itself (a
// lesson's "lesson next" and "predict b", a recording's "step back").
type Order struct {
	// Line is the command as typed, or as a key would type it: the status
	// line shows it.
	Line string
	// Cmd is the lab command; nil for a line of the source's own.
	Cmd command.Command
	// Err says why Line is no lab command, when the prompt could not parse
	// it: a source that does not read the line itself answers with it.
	Err error
}

// CommandOrder is the order for a lab command a key builds.
func CommandOrder(cmd command.Command) Order { return Order{Line: cmd.String(), Cmd: cmd} }

// LineOrder is the order for a line of the source's own, which is no lab
// command (lesson next, step back).
func LineOrder(line string) Order { return Order{Line: line} }

// NotLabCommand is a source's answer to an order that is neither a lab command
// nor a line it reads itself.
func (o Order) NotLabCommand() error {
	if o.Err != nil {
		return o.Err
	}
	return fmt.Errorf("%q is not a lab command", o.Line)
}

// State is one moment of the lab as the panels show it. Every slice is
// a window chosen by the source (the newest log entries, the last timeline
// lines, the first rows of a table): the TUI draws windows, never whole logs.
type State struct {
	// Time is the lab clock at this moment; the history banner shows it.
	Time   time.Time
	Clock  Clock
	Timing string // "classroom" or "fast"

	Nodes      []Node
	Partitions []Partition // topic partitions and queue groups, in display order
	Groups     []Group
	Queues     []Queue
	Tables     []Table

	// Timeline holds the last events, oldest first (the panel shows them
	// newest first).
	Timeline []TimelineLine
	Checker  Checker
	Charts   Charts
	// Jobs are long runs with progress: a load generator, a drain.
	Jobs []Job
	// Lesson is nil in the sandbox.
	Lesson *Lesson
	// Kafka is the Kafka listener, nil when the nodes do not speak it.
	Kafka *Kafka
	// SQS is n1's SQS endpoint, "" when the nodes do not speak it.
	SQS string
	// LogDir is the folder of the replicas' segment files, "" for none.
	LogDir string
	// Class is, on a teacher's shared screen, who is connected; else nil.
	Class *Roster
}

// Kafka is the nodes' Kafka listener and the clients connected to it.
type Kafka struct {
	Bootstrap string // n1's address first: what a client is pointed at
	Clients   []KafkaClient
}

// KafkaClient is one outside client, by its client.id.
type KafkaClient struct {
	ID       string
	Software string // "librdkafka 2.0.2", when it said
}

// Clock is the lab clock's speed and whether it runs.
type Clock struct {
	Speed  float64 // 1 is real time; 0 means 1
	Paused bool
	// Held says why a lesson holds the paused clock: "reading — any
	// command resumes"; "" when it does not.
	Held string
	// Behind is the share of the last second's lab time held back for a
	// machine too busy to keep up: 0 when it keeps up.
	Behind float64
}

// Node is one broker node.
type Node struct {
	ID       string
	Up       bool
	Isolated bool          // every link cut: peers and clients
	CutFrom  []string      // peers it cannot reach (a partition), when not isolated
	Latency  time.Duration // added by "slow"
	Leads    []string      // groups it leads: "controller", "orders/0", "receipts"
}

// Partition is one raft group with a log: a topic partition ("orders/0").
type Partition struct {
	Name     string // "orders/0"
	Leader   string // "" when there is none
	Epoch    uint64 // the leader's epoch; without one, the highest among live replicas
	Replicas []Replica
}

// Replica is one node's copy of a partition's log.
type Replica struct {
	Node  string
	Role  string // "leader", "follower", "candidate" or "down"
	Epoch uint64
	// LogStart is the first retained offset, HWM the next offset to be
	// committed as far as this replica knows, LEO the next offset it would
	// write (uncommitted entries included).
	LogStart int64
	HWM      int64
	LEO      int64
	// Entries is a window of the newest entries, ending at LEO, in offset
	// order. A few dozen are plenty: the panel shows what fits.
	Entries []Entry
	// SegmentStarts are the base offsets of the replica's segment files,
	// oldest first, as the broker lists them: where each file begins.
	SegmentStarts []int64
	// Raft is what its raft did lately, for the raft panel.
	Raft RaftView
	// Truncation is the replica's latest cut of its uncommitted tail, or nil.
	// The panel flashes a truncation it has not seen before and names it
	// while it is recent.
	Truncation *Truncation
}

// RaftView is a replica's raft as the raft panel shows it.
type RaftView struct {
	SinceContact time.Duration // a follower's time since it heard a leader
	ElectionIn   time.Duration // at least this long before it would stand; -1 for a leader
	Exchanges    []RaftExchange
}

// RaftExchange is the last RPC of a kind the replica sent a peer.
type RaftExchange struct {
	Kind    string // "append" or "vote"
	Peer    string
	Ago     time.Duration
	Term    uint64
	Entries int  // append: 0 is a heartbeat
	PreVote bool // vote: a pre-vote
	OK      bool // success, or the vote granted
	Lost    string
}

// Entry is one record of a replica's log.
type Entry struct {
	Offset    int64
	Epoch     uint64
	Key       string
	Value     string
	Committed bool // this replica knows it is committed (below its high-water mark)
	// Learning: committed on a majority, but this replica has not heard so
	// yet (a follower just back: its high-water mark lags the leader's).
	Learning bool
}

// Truncation is a cut of a replica's uncommitted tail.
type Truncation struct {
	// At is when it happened, in lab time. Zero is allowed: the TUI then
	// dates it by the state in which it first saw it.
	At     time.Time
	From   int64    // first offset cut
	To     int64    // exclusive
	Epochs []uint64 // epochs of the cut entries
}

// Group is a consumer group.
type Group struct {
	Name       string
	Topic      string
	Generation int
	State      string // "stable", "rebalancing", "empty"
	Members    []Member
	Offsets    []GroupOffset // one per partition of the topic
	Lag        int64         // offsets, all partitions: the high-water marks minus the commits
	LagSeconds float64       // age of the oldest unconsumed message
}

// Member is one consumer in a group.
type Member struct {
	ID         string
	Partitions []string // assigned: "orders/0"; none means idle
	State      string   // "up", "crashed", "stopped", "joining"
}

// GroupOffset is a group's position on one partition.
type GroupOffset struct {
	Partition  string
	Committed  int64 // -1 when nothing is committed yet
	HWM        int64
	Lag        int64
	LagSeconds float64
}

// Queue is a work queue.
type Queue struct {
	Name        string
	Leader      string
	Epoch       uint64
	Ready       int
	InFlight    int
	Delayed     int
	DLQ         string // the dead-letter queue's name, "" if none
	DLQDepth    int
	MaxReceives int
	Visibility  time.Duration
	// MaxLength bounds what the queue holds (0: no bound); TTL drops a
	// message that waited that long (0: none).
	MaxLength int
	TTL       time.Duration
	// Messages is a window of messages worth seeing: in flight (with the
	// time until they come back), delayed, and the first ready ones.
	Messages []QueueMessage
}

// QueueMessage is one message of a queue.
type QueueMessage struct {
	ID       string
	Value    string
	State    string        // "ready", "in-flight", "delayed"
	Worker   string        // who holds it, when in flight
	Receives int           // how many times it has been received
	Due      time.Duration // in flight: until it becomes visible again; delayed: until ready
}

// Table is a window of a service's SQL table, as strings.
type Table struct {
	Name    string // "orders.outbox"
	Columns []string
	Rows    [][]string
	Total   int // rows in the table; Rows may hold fewer
	// Note says why there are no rows to show ("could not read: …").
	Note string
}

// TimelineLine is one event of the lab's timeline.
type TimelineLine struct {
	Time time.Time
	Kind string // "leader-elected", "truncation", "node-killed", "delivery", …
	Text string // one readable sentence
}

// Checker is the checker's latest report.
type Checker struct {
	At     time.Time // zero until the first check
	Fields []CheckField
}

// CheckField is one invariant with its count.
type CheckField struct {
	Name  string // "lost", "duplicate_deliveries", …
	Value int64
	OK    bool   // whether the count is what a correct system gives
	Note  string // optional: "3 confirmed acks=1 writes were truncated"
	// Why is the records behind the count, one line each (check why
	// FIELD lists the same); More is how many more there are.
	Why  []string
	More int
}

// Charts are the series the chart panel draws.
type Charts struct {
	// Series are values over time, oldest first, one every Every.
	Series []Series
	// Retries are spreads of retry times: when each retry came back to
	// its client (as retry_peak counts them), in lab time since the
	// client's first failure. Drawn as histograms, one above the other, on
	// one time axis, so "no jitter" shows waves and "full jitter" a spread.
	Retries []RetrySpread
}

// Series is one quantity over time.
type Series struct {
	Name   string // the lab value: "lag(billing)", "depth(receipts)"
	Unit   string // "msgs", "offsets", "s"
	Every  time.Duration
	Values []float64
}

// RetrySpread is the set of times at which retries came back.
type RetrySpread struct {
	Name  string // "retries of pay-1"
	Times []time.Duration
	// Peak is the most of Times within one Window: what retry_peak
	// reads of the client. The chart's tallest bar shows it.
	Peak   int
	Window time.Duration
}

// Job is a long run with progress.
type Job struct {
	Name  string // "load orders", "check: draining"
	Done  int64
	Total int64 // 0 when unknown
}

// Lesson is the open lesson as the lesson pane shows it.
type Lesson struct {
	// Next names the lesson after this one ("5 · Idempotency keys"),
	// offered once this one is finished; "" for the last.
	Next      string
	ID        string
	Title     string
	Step      int // 1-based
	Steps     int
	StepTitle string
	// Blocks is the step as it has played so far, in the lesson's order:
	// narrative, the commands the lab ran, tasks, the prediction, the
	// expectations.
	Blocks []LessonBlock
	// Tasks, Prediction and Expectations are the step's so far, also in
	// Blocks: the task line and the keys read them.
	Tasks        []Task
	Prediction   *Prediction // the open one, else the last one answered
	Expectations []Expectation
	// Status says what the step waits for; the pane's last rows say it.
	Status lessons.Status
	// Notice says what went off track and how to get back: shown above
	// the status, in full.
	Notice string
}

// LessonBlockKind says which field of a LessonBlock is set.
type LessonBlockKind int

const (
	BlockText LessonBlockKind = iota
	BlockCommands
	BlockTask
	BlockPrediction
	BlockExpect
)

// LessonBlock is one piece of a step as it played.
type LessonBlock struct {
	Kind         LessonBlockKind
	Text         string        // BlockText: Markdown, placeholders filled
	Commands     []CommandLine // BlockCommands
	Task         *Task
	Prediction   *Prediction
	Expectations []Expectation
}

// CommandLine is one command the lesson ran and whether it went through.
type CommandLine struct {
	Text string
	OK   bool
	Note string // why not, when it did not
	// Found is what a command that looks into the lab's files found (log
	// files, log dump), shown under it: the lesson's question may rest
	// on it.
	Found []string
}

// Task is something the learner must do.
type Task struct {
	Text string // the goal
	Hint string // one way there, the key or command: "key: select n1 and press k · or type: kill n1"
	// HintShown: the learner asked for the hint; until then the pane
	// says only how to ask.
	HintShown bool
	// Decide names what the learner chooses when the task is a decision,
	// which ends when they press n; Acted: they have run a command since
	// it opened.
	Decide string
	Acted  bool
	Done   bool
	// Waiting is, while the task waits, the condition that does not hold
	// yet and what the lab shows: "hwm(orders/0@n1) == 2000 (now 1500)".
	Waiting string
	// Tried: the learner did what the task asks; the lab is getting there.
	Tried bool
	// Chosen are the commands of the learner's choice for a decision
	// that wait to run until they say it is complete.
	Chosen []string
}

// Prediction is a question asked before the reveal.
type Prediction struct {
	Question string
	Choices  []string
	Chosen   int    // 0-based; -1 until the learner answers
	Answer   int    // 0-based; -1 until revealed
	Why      string // the explanation, once revealed
	// Numeric: the question asks for a number, not a choice; Chosen and
	// Answer are 0 once answered and revealed. Given is the number the
	// learner gave, Right the answer with its tolerance, Correct whether
	// Given was within it, and Number the answer, once revealed.
	Numeric bool
	Given   string
	Right   string
	Correct bool
	Number  *lessons.Number
	// Class is, on a teacher's shared screen, how the students who
	// follow it answered, while the question is open and after its
	// reveal; else nil.
	Class *ClassTally
}

// Expectation is one condition of an expect block.
type Expectation struct {
	Text    string // "leader(orders/0) != n1"
	Label   string // what it means, in words: "the new leader is not n1"
	Checked bool   // false until it has been evaluated
	OK      bool
	Got     string // the values read: "leader(orders/0) is n2"
}

// ClassTally is how the class answered the teacher's open question.
type ClassTally struct {
	Counts    []int // per choice, in the order shown
	Answered  int
	Following int
	// Numeric: the question asks for a number; Numbers are the answers,
	// in order.
	Numeric bool
	Numbers []float64
}

// String is the tally as the teacher's pane shows it: "12 of 20 answered:
// a 3 · b 7 · c 2", or for a number "12 of 20 answered — from 10 to 40,
// median 20".
func (t *ClassTally) String() string {
	if t.Numeric {
		s := fmt.Sprintf("class: %d of %d answered", t.Answered, t.Following)
		if n := len(t.Numbers); n > 0 {
			med := t.Numbers[n/2]
			if n%2 == 0 {
				med = (t.Numbers[n/2-1] + t.Numbers[n/2]) / 2
			}
			s += fmt.Sprintf(" — from %s to %s, median %s", lessons.FormatNumber(t.Numbers[0]),
				lessons.FormatNumber(t.Numbers[n-1]), lessons.FormatNumber(med))
		}
		return s
	}
	parts := make([]string, len(t.Counts))
	for i, n := range t.Counts {
		parts[i] = fmt.Sprintf("%c %d", 'a'+i, n)
	}
	return fmt.Sprintf("class: %d of %d answered — %s", t.Answered, t.Following, strings.Join(parts, " · "))
}
