package lessons

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mqlab/mqlab/lab/command"
)

// Each embedded lesson, with one mutation of its commands that must make an
// expectation fail: if the lesson still passed, its expects would not be
// checking what it teaches.
var mutations = map[string]struct{ old, new, why string }{
	"compaction": {
		old: "delete-retention=2m", new: "delete-retention=30s",
		why: "stock keeps a tombstone 30 s, so the pass 50 s after the withdrawal removes it before search reads on: delivered(search) == 11 fails",
	},
	"queues": {
		old: "queue create receipts visibility=5s", new: "queue create receipts visibility=3s",
		why: "with a 3 s timeout receipt 881 is visible again the moment w1 crashes, not 2 s later: oldest_age == 5 ± 1 fails",
	},
	"retries": {
		old: "jitter=full max-attempts=3", new: "jitter=none max-attempts=3",
		why: "the full-jitter run without jitter sends each batch's 15 retries back in one wave: retry_peak(payments) <= 12 fails",
	},
	"shapes": {
		old: "consumer start audit-1 group=audit topic=orders from=latest", new: "consumer start audit-1 group=audit topic=orders from=earliest",
		why: "an audit group that starts at the earliest offset reads the 12 orders written before it joined: delivered(audit) == 17 fails",
	},
	"choosing": {
		old: "service start checkout mode=sync receipt=600ms", new: "service start checkout mode=sync receipt=100ms",
		why: "with a healthy 100 ms receipt service the 8 threads serve about 40 buyers a second, not 11: served(checkout) <= 48 and waiting > 0 fail",
	},
	"why-a-queue": {
		old: "mode=sync receipt=3s", new: "mode=sync receipt=100ms",
		why: "with a healthy 100 ms receipt service the direct call keeps up: busy == 8, waiting == arrived - 16, served == 8, no_thread > 0, charged_but_failed > 0 and p99 >= 5 fail",
	},
	"delivery-guarantees": {
		old: "ack=before crash=before-work", new: "ack=after crash=before-work",
		why: "the at-most-once run commits after the work instead: order 881 comes back after the crash and is credited, so delivered(cashback) == 5, processed(cashback) == 4 and the ₹100 balance fail",
	},
	"flash-sale": {
		old: "billing-1 group=billing topic=orders rate=200/s", new: "billing-1 group=billing topic=orders rate=300/s",
		why: "workers that finish 500 a second grow the backlog by 500, not 600: it reaches 9,000 at 18 s, not 15, and lag == 36000 ± 3600 fails (the oldest wait is billing-2's partition, still at 200 a second)",
	},
	"partition-sizing": {
		old: "topic create orders partitions=8", new: "topic create orders partitions=4",
		why: "with four partitions the three workers who join own none: the group bills 200 a second, not 275, and throughput(billing) == 275 ± 25 fails",
	},
	"idempotency-keys": {
		old: "crash=after-work", new: "crash=before-work",
		why: "worker A dies before charging, so worker B's charge is the first and payments never answers a repeat: rows(payments.charges) == 1 after the crash and the repeats counts fail",
	},
	"idempotent-consumer": {
		old: "strategy=dedupe-table", new: "strategy=none",
		why: "a wallet that keeps no processed_messages credits the redelivered ₹50 again: balance=160, processed_messages == 4 and duplicate_effects == 0 fail",
	},
	"outbox": {
		old: "service start orders mode=outbox crash=before-mark", new: "service start orders mode=outbox crash=after-commit",
		why: "the first of the relay step's two crashes comes after the order's commit, before any publish, not between publish and mark: msg-881 goes out twice, not three times, and hwm(orders/0) == 4 and attempts=3 fail",
	},
	"ordering": {
		old: "topic create orders partitions=3\nconsumer start billing-1 group=billing topic=orders work=200ms", new: "topic create orders partitions=4\nconsumer start billing-1 group=billing topic=orders work=200ms",
		why: "with four partitions orders 881 and 889 hash to one partition and 882 to another: hwm(orders/1) == 3, hwm(orders/0) == 4 and workers(billing) == 3 fail",
	},
	"durability": {
		old: "acks=1 as=checkout", new: "acks=all as=checkout",
		why: "the acks=1 step written with acks=all loses nothing: hwm == 1 and lost == 1 fail",
	},
	"the-log": {
		old: `value="order {n} placed" count=25`, new: `value="order {n} placed" count=24`,
		why: "24 orders instead of 25: every hwm expectation after it is one short",
	},
	"replication": {
		old: "count=3 acks=1 as=warehouse", new: "count=3 acks=all as=warehouse",
		why: "acks=all cannot commit on the cut-off leader and retries on the new one: the followers get offsets 10–12, so leo(orders/0@n2) == 10, lost == 3 and the consumer counts (delivered(audit) == 10, 15) fail",
	},
	"back-pressure": {
		old: "topic create orders partitions=4", new: "topic create orders partitions=6",
		why: "with six partitions all six consumers get one: idle(billing) == 2 and throughput(billing) <= 210 fail, as the group reaches 300 a second",
	},
	"failover": {
		old: `value="order 881 paid" batch=500 acks=all idempotent=true`, new: `value="order 881 paid" batch=500 acks=all idempotent=false`,
		why: "without idempotence the checkout's lost reply is written twice: recognised(checkout) == 1, duplicate_writes == 1 and hwm(orders/0) == 2004 fail",
	},
	"your-own-sqs-worker": {
		old: "elect n3 receipts", new: "elect n1 receipts",
		why: "with n1 leading receipts, killing the client's endpoint kills the queue's leader too: leader(receipts) == n3 and epoch(receipts) == mid fail",
	},
	"fifo-queues": {
		old: "pause in=180s", new: "pause in=60s",
		why: "a third refund sent four minutes after the first is still inside the five-minute window and is dropped: depth(refunds) == 2 fails",
	},
	"rebalancing": {
		old: "crash=after-work session=4s", new: "crash=after-work session=500ms",
		why: "with a 500 ms session the coordinator drops billing-2 long before the clock stops 3 s after its crash, and billing-1 reads its partition: members(billing) == 2 and lag(billing) >= 120 fail",
	},
	"your-own-client": {
		old: `value="order 881 packed" acks=all idempotent=true`, new: `value="order 881 packed" acks=all idempotent=false`,
		why: "a checkout without idempotence sends \"packed\" again as a new batch: the new leader writes it a second time, so hwm == 7 and duplicate_writes == 0 fail",
	},
}

// raceLessons are the lessons played under the race detector.
var raceLessons = []string{"idempotency-keys", "failover"}

// LessonTimeLimit bounds one embedded lesson's play in a test: far more
// than an idle machine needs (under 30 s headless), so that a busy one,
// on which lab time waits for the lab's work, still finishes. How long a
// lesson takes is logged, not asserted: it is a speed, not a behaviour.
const LessonTimeLimit = 90 * time.Second

func TestCurriculumParses(t *testing.T) {
	all, err := Curriculum()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 4 {
		t.Fatalf("%d lessons", len(all))
	}
	for _, les := range all {
		if les.Minutes == 0 || les.Summary == "" {
			t.Errorf("%s: minutes and summary help the lesson picker", les.ID)
		}
		if _, ok := mutations[les.ID]; !ok {
			t.Errorf("%s has no mutation in curriculum_test.go", les.ID)
		}
		stem := strings.TrimSuffix(strings.TrimPrefix(les.File, "curriculum/"), ".md")
		num, _, _ := strings.Cut(stem, "-")
		n, _ := strconv.Atoi(num)
		for _, ref := range []string{les.ID, stem, num, strconv.Itoa(n)} { // id, file name, "03" and "3"
			if got, err := Find(ref); err != nil || got != les {
				t.Errorf("Find(%q): %v", ref, err)
			}
		}
	}
	for _, id := range raceLessons {
		if _, err := Find(id); err != nil {
			t.Errorf("raceLessons: %v", err)
		}
	}
	if _, err := Find("durabilty"); err == nil || !strings.Contains(err.Error(), `did you mean "durability"?`) {
		t.Errorf("a typo: %v", err)
	}
}

// maxGuessable is the largest share of the curriculum's right answers
// that one place in the files' choice lists, or "the longest choice", may
// hold: past it, a learner who always picks b, or the longest, guesses
// better than chance.
const maxGuessable = 0.40

// The right answers are spread over the choices' places and lengths, so
// neither tells a learner which one is right.
func TestCurriculumAnswersCannotBeGuessed(t *testing.T) {
	all, err := Curriculum()
	if err != nil {
		t.Fatal(err)
	}
	at := map[int][]string{}
	var longest []string
	total := 0
	for _, les := range all {
		for _, st := range les.Steps {
			for _, b := range st.Blocks {
				pr := b.Predict
				if b.Kind != KindPredict || len(pr.Choices) < 2 {
					continue
				}
				total++
				where := fmt.Sprintf("%s:%d", les.ID, pr.Line)
				at[pr.Answer] = append(at[pr.Answer], where)
				if isLongest(pr.Choices, pr.Answer) {
					longest = append(longest, where)
				}
			}
		}
	}
	if total == 0 {
		t.Fatal("the curriculum has no prediction with choices")
	}
	limit := int(maxGuessable * float64(total))
	for i, where := range at {
		if len(where) > limit {
			t.Errorf("choice %c is right in %d of %d predictions (more than %.0f%%): %s",
				'a'+i, len(where), total, 100*maxGuessable, strings.Join(where, ", "))
		}
	}
	if len(longest) > limit {
		t.Errorf("the longest choice is right in %d of %d predictions (more than %.0f%%): %s",
			len(longest), total, 100*maxGuessable, strings.Join(longest, ", "))
	}
	t.Logf("%d predictions; right answers by place: a %d, b %d, c %d, d %d; the longest %d",
		total, len(at[0]), len(at[1]), len(at[2]), len(at[3]), len(longest))
}

// Every lesson gives the learner something to do, and the questions ask
// for numbers where the reference texts do arithmetic: the flash sale's
// backlog and wait, the partition cap, the write ceiling, what acks=all
// costs a write.
func TestCurriculumTasksAndNumbers(t *testing.T) {
	all, err := Curriculum()
	if err != nil {
		t.Fatal(err)
	}
	numeric := map[string]int{}
	for _, les := range all {
		tasks := 0
		for _, st := range les.Steps {
			for _, b := range st.Blocks {
				if b.Kind == KindTask {
					tasks++
				}
			}
		}
		if tasks == 0 {
			t.Errorf("%s has no task: the learner only reads and answers", les.ID)
		}
		for _, pr := range les.Predictions() {
			if pr.Number != nil {
				numeric[les.ID]++
			}
		}
	}
	for id, want := range map[string]int{"flash-sale": 3, "back-pressure": 2, "partition-sizing": 1, "durability": 1} {
		if numeric[id] < want {
			t.Errorf("%s asks for %d numbers; it should ask for at least %d", id, numeric[id], want)
		}
	}
}

// isLongest reports whether choice i is strictly the longest, in runes.
func isLongest(choices []string, i int) bool {
	n := utf8.RuneCountInString(choices[i])
	for k, c := range choices {
		if k != i && utf8.RuneCountInString(c) >= n {
			return false
		}
	}
	return true
}

// playsAtOnce is how many plays of curriculum lessons the curriculum
// tests run at a time, each on its own lab. A play mostly waits on lab
// time and raft's timers (about an eighth of a core on fast timing), so
// many at once finish sooner on two cores without crowding them. Ten,
// once no play waited for another's port, crowded a machine busy with
// other work: with stress-ng on both cores an acks=all latency read
// 196 ms of lab time where 100 is the most a lesson allows.
const playsAtOnce = 8

// playTurns is shared by the curriculum tests' plays.
var playTurns = newTurns(playsAtOnce)

// onFreePorts returns les, parsed afresh, with its kafka listen and sqs
// listen on free ports rather than the ports its prose names: plays of
// one lesson run side by side, and each would bind the same ports. What
// the lesson checks does not depend on the port's number. The copy is
// the play's own: the curriculum's parsed lessons are shared by all.
func onFreePorts(t *testing.T, les *Lesson) *Lesson {
	t.Helper()
	src, err := curriculumFS.ReadFile(les.File)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := Parse(les.File, src)
	if err != nil {
		t.Fatal(err)
	}
	return freePorts(fresh)
}

// freePorts moves les's listeners to free ports, in place.
func freePorts(les *Lesson) *Lesson {
	for _, st := range les.Steps {
		for _, b := range st.Blocks {
			for i, l := range b.Commands {
				switch c := l.Cmd.(type) {
				case command.KafkaListen:
					if c.Port > 0 {
						c.Port = command.AnyPort
					}
					b.Commands[i].Cmd = c
				case command.SQSListen:
					if c.Port > 0 {
						c.Port = command.AnyPort
					}
					b.Commands[i].Cmd = c
				}
			}
		}
	}
	return les
}

// eachLesson runs play for every embedded lesson as a parallel subtest,
// taking a turn for it. Under the race detector only raceLessons play,
// unless all is false: then none does.
func eachLesson(t *testing.T, underRace bool, play func(t *testing.T, les *Lesson)) {
	eachLessonOn(t, underRace, playTurns, play)
}

// eachLessonOn is eachLesson taking turns of its own.
func eachLessonOn(t *testing.T, underRace bool, turns *turns, play func(t *testing.T, les *Lesson)) {
	all, err := Curriculum()
	if err != nil {
		t.Fatal(err)
	}
	for _, les := range all {
		t.Run(les.ID, func(t *testing.T) {
			switch {
			case raceEnabled && !underRace:
				t.Skip("not under the race detector")
			case raceEnabled && !slices.Contains(raceLessons, les.ID):
				t.Skip("under the race detector only " + strings.Join(raceLessons, ", ") + " play")
			}
			t.Parallel()
			defer turns.take(playRank(les.ID))()
			play(t, onFreePorts(t, les))
		})
	}
}

// Every embedded lesson plays headless at fast timing, every expectation
// holding, and its transcript fits 80 columns. In a full run the
// reading-pace play writes each lesson's transcript as it plays, and
// checks it (see checkTranscript); a play of its own here would repeat
// it. Under -short, which leaves that play out, and under the race
// detector, this test plays them.
func TestCurriculumHeadless(t *testing.T) {
	t.Parallel()
	eachLesson(t, true, func(t *testing.T, les *Lesson) {
		if !testing.Short() && !raceEnabled {
			t.Skip("the reading-pace play writes and checks the transcript (TestCurriculumAtReadingPace)")
		}
		ctx := ctxFor(t, 2*LessonTimeLimit)
		var out bytes.Buffer
		start := time.Now()
		err := PlayHeadless(ctx, les, &out, Options{Timing: "fast"})
		took := time.Since(start)
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		t.Logf("%s: %v", les.ID, took.Round(time.Millisecond))
		checkTranscript(t, out.String())
	})
}

// checkTranscript: every line of a lesson's transcript fits Width, and
// none shows a value the lab could not read.
func checkTranscript(t *testing.T, out string) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("transcript line %d has %d characters: %q", i+1, n, l)
		}
		if strings.Contains(l, "‹?") {
			t.Errorf("transcript line %d shows a value it could not read: %q", i+1, l)
		}
	}
}

// Each lesson's mutation, a small change that breaks what it teaches,
// must make it fail: its expectations are ones that can fail.
func TestCurriculumMutations(t *testing.T) {
	t.Parallel()
	eachLesson(t, false, func(t *testing.T, les *Lesson) {
		ctx := ctxFor(t, 2*LessonTimeLimit)
		m := mutations[les.ID]
		src, err := curriculumFS.ReadFile(les.File)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(src, []byte(m.old)) {
			t.Fatalf("the mutation's text %q is not in %s", m.old, les.File)
		}
		mutated, err := Parse(les.File, bytes.Replace(src, []byte(m.old), []byte(m.new), 1))
		if err != nil {
			t.Fatalf("the mutated lesson does not parse: %v", err)
		}
		var out bytes.Buffer
		err = PlayHeadless(ctx, freePorts(mutated), &out, Options{Timing: "fast", FailFast: true})
		var fe *FailedError
		if !errors.As(err, &fe) {
			t.Fatalf("mutation (%s): want failed expectations, got %v\n%s", m.why, err, out.String())
		}
		t.Logf("mutation %q → %q failed %d expectation(s), as it should: %s", m.old, m.new, len(fe.Failed), m.why)
	})
}

// lesson check --play finds nothing in the curriculum. The audit plays
// each task its also: way, when it has one: a task's other ways to its
// goal hold the lesson's expectations as well.
func TestCurriculumAudit(t *testing.T) {
	t.Parallel()
	eachLesson(t, false, func(t *testing.T, les *Lesson) {
		found, err := Audit(ctxFor(t, 2*LessonTimeLimit), les, Options{Timing: "fast", Alternate: hasAlso(les)})
		if err != nil {
			t.Fatalf("lesson check --play: %v", err)
		}
		for _, f := range found {
			t.Errorf("lesson check --play: %s:%v", les.File, f)
		}
	})
}

// ReadingPause is the wall time the curriculum test reads for at every
// question, task and step's end: longer than a fast-timing election, so
// an answer that an election brings on screen while a person reads shows.
const ReadingPause = 500 * time.Millisecond

// readingTurns are the reading-pace plays' own, beside the turns of the
// plays at machine speed. Played one after another the curriculum takes
// about ten minutes at reading pace and the longest lesson a minute, much
// of it waiting on lab time and the reader's pauses. Eight at once ended
// with the machine-speed plays on a quiet machine, but beside two cores'
// worth of other work the plays together outran it: back-pressure's,
// 40 s when quiet, took three minutes. Six at once hold there.
var readingTurns = newTurns(6)

// lesson check --reading finds nothing in the curriculum: played as the
// screen plays it, at a person's pace, no answer reaches the screen
// before its question and every task can still be done once it is read.
func TestCurriculumAtReadingPace(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: every lesson at reading pace takes about a minute")
	}
	eachLessonOn(t, false, readingTurns, func(t *testing.T, les *Lesson) {
		var transcript bytes.Buffer
		found, err := Audit(ctxFor(t, 4*LessonTimeLimit), les, Options{Timing: "fast", Reading: ReadingPause, transcript: &transcript})
		if err != nil {
			t.Fatalf("lesson check --reading %v: %v\n%s", ReadingPause, err, transcript.String())
		}
		for _, f := range found {
			t.Errorf("lesson check --reading %v: %s:%v", ReadingPause, les.File, f)
		}
		if len(found) > 0 {
			t.Logf("the play up to its first failed expectation:\n%s", upToFirstMiss(transcript.String(), 60))
		}
		checkTranscript(t, transcript.String())
	})
}

// upToFirstMiss is the n lines of a transcript that lead to its first
// failed expectation (✗) and the few after it; the last n without one.
func upToFirstMiss(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	end := len(lines)
	for i, l := range lines {
		if strings.Contains(l, "✗ ") {
			end = min(len(lines), i+4)
			break
		}
	}
	return strings.Join(lines[max(0, end-n):end], "\n")
}

// hasAlso says whether a task of les names another way to its goal.
func hasAlso(les *Lesson) bool {
	for _, st := range les.Steps {
		for _, b := range st.Blocks {
			if b.Kind == KindTask && len(b.Task.Also) > 0 {
				return true
			}
		}
	}
	return false
}

// At least a third of the curriculum's tasks can be met in more than one
// way: the learner decides how, not only whether.
func TestCurriculumTasksHaveWays(t *testing.T) {
	all, err := Curriculum()
	if err != nil {
		t.Fatal(err)
	}
	tasks, ways := 0, 0
	for _, les := range all {
		for _, st := range les.Steps {
			for _, b := range st.Blocks {
				if b.Kind != KindTask {
					continue
				}
				tasks++
				if len(b.Task.Also) > 0 {
					ways++
				}
			}
		}
	}
	if 3*ways < tasks {
		t.Errorf("%d of %d tasks name another way to their goal (also:); at least a third should", ways, tasks)
	}
	t.Logf("%d of %d tasks can be met more than one way", ways, tasks)
}

// At least half of the curriculum's tasks are design decisions: the
// learner chooses values (decide:), the goal grades what the lab did with
// them, and more than one choice is right.
func TestCurriculumTasksAreDecisions(t *testing.T) {
	all, err := Curriculum()
	if err != nil {
		t.Fatal(err)
	}
	tasks, decisions := 0, 0
	for _, les := range all {
		for _, st := range les.Steps {
			for _, b := range st.Blocks {
				if b.Kind != KindTask {
					continue
				}
				tasks++
				if b.Task.Decide == "" {
					continue
				}
				decisions++
				if len(b.Task.Also) == 0 {
					t.Errorf("%s:%d: the task asks to decide %s but accepts one answer", les.File, b.Line, b.Task.Decide)
				}
			}
		}
	}
	if 2*decisions < tasks {
		t.Errorf("%d of %d tasks are design decisions (decide:); at least half should be", decisions, tasks)
	}
	t.Logf("%d of %d tasks are design decisions", decisions, tasks)
}
