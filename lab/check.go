package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/clock"
	"github.com/mqlab/mqlab/lab/command"
)

// DrainTimeout bounds a check's wait for leaders, in wall time.
const DrainTimeout = 30 * time.Second

// settleTimeout bounds the wait for a partition leader's uncommitted tail
// to commit (or be cut) before its log is read, so that an acks=1 write the
// leader has not replicated yet is not counted lost a moment too early.
const settleTimeout = 5 * time.Second

// Check drains the cluster and returns the checker's report: it waits (up
// to DrainTimeout of wall time) for every partition to have a leader, reads
// every committed log from its start, and changes no fault. Partitions it
// could not read are named in the report and in the error; their messages
// count as unchecked, never as lost.
func (l *Lab) Check(ctx context.Context) (checker.Report, error) {
	w, err := l.world()
	if err != nil {
		return checker.Report{}, err
	}
	return l.checkWorld(ctx, w)
}

func (l *Lab) checkWorld(ctx context.Context, w *world) (checker.Report, error) {
	rep, err := l.report(ctx, w, true)
	w.mu.Lock()
	w.report, w.checked = &rep, l.clock.Now()
	w.mu.Unlock()
	return rep, err
}

// report runs the checker as Check does, without keeping its report as
// the lab's last check; shown puts the drain on screen as a job.
func (l *Lab) report(ctx context.Context, w *world, shown bool) (checker.Report, error) {
	h := w.checkerHistory() // before the logs: whatever it confirmed is committed by the time we read
	ctx, cancel := w.bind(ctx)
	defer cancel()
	ctx, cancel2 := context.WithTimeout(ctx, DrainTimeout)
	defer cancel2()
	var obs checker.Observed
	var problems []string
	topics := w.cluster.SnapshotWindow(0).Topics
	total := len(observers)
	for _, t := range topics {
		total += len(t.Partitions)
	}
	drainAt := func(int, string) {}
	if shown {
		defer w.drainStart(total)()
		drainAt = w.drainAt
	}
	done := 0
	for _, t := range topics {
		for _, p := range t.Partitions {
			tp := broker.TopicPartition{Topic: p.Topic, Partition: p.Partition}
			drainAt(done, tp.String())
			done++
			log, err := w.readLog(ctx, tp)
			if err != nil {
				obs.Unreadable = append(obs.Unreadable, tp.String())
				problems = append(problems, fmt.Sprintf("%s (%v)", tp, err))
				continue
			}
			obs.Logs = append(obs.Logs, log)
		}
	}
	for _, f := range observers {
		drainAt(done, "the services and queues")
		done++
		if err := f.observe(ctx, w, &h, &obs); err != nil {
			problems = append(problems, err.Error())
		}
	}
	rep := checker.Check(h, obs)
	if len(problems) > 0 {
		return rep, fmt.Errorf("check: could not read %s", strings.Join(problems, "; "))
	}
	return rep, nil
}

// readLog waits for the partition's leader and its settled log, then reads
// the committed log from its start, retrying until ctx ends.
func (w *world) readLog(ctx context.Context, tp broker.TopicPartition) (checker.Log, error) {
	if err := w.awaitSettled(ctx, tp); err != nil {
		return checker.Log{}, err
	}
	var last error
	for {
		log, err := w.readOnce(ctx, tp)
		if err == nil {
			return log, nil
		}
		if errors.Is(err, broker.ErrUnknownTopic) || errors.Is(err, broker.ErrUnknownPartition) || errors.Is(err, broker.ErrClosed) {
			return checker.Log{}, err
		}
		last = err
		if clock.SleepWall(ctx, 20*time.Millisecond) != nil {
			return checker.Log{}, fmt.Errorf("gave up after %v: %w", DrainTimeout, last)
		}
	}
}

// awaitSettled waits for the partition's leader and, up to settleTimeout,
// for the leader to have committed all it wrote.
func (w *world) awaitSettled(ctx context.Context, tp broker.TopicPartition) error {
	if _, err := w.cluster.WaitForLeader(ctx, tp); err != nil {
		return err
	}
	settle, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	for settle.Err() == nil && !w.settled(tp) {
		clock.SleepWall(settle, 5*time.Millisecond)
	}
	return nil
}

// settled reports whether the partition's leader has committed all it wrote.
func (w *world) settled(tp broker.TopicPartition) bool {
	p, err := w.partition(tp.Topic, tp.Partition)
	if err != nil || p.Leader == "" {
		return false
	}
	for _, r := range p.Replicas {
		if r.Node == p.Leader {
			return r.Up && r.LogEnd == r.HighWatermark
		}
	}
	return false
}

func (w *world) readOnce(ctx context.Context, tp broker.TopicPartition) (checker.Log, error) {
	log := checker.Log{Topic: tp.Topic, Partition: tp.Partition}
	if t, err := w.topic(tp.Topic); err == nil {
		log.Compacted = t.Config.Compacted()
	}
	start, err := w.eachRecord(ctx, tp, func(rec broker.Record) {
		log.Records = append(log.Records, checker.Record{Offset: rec.Offset, MsgID: rec.MsgID})
	})
	if err != nil {
		return checker.Log{}, err
	}
	log.Start = start
	return log, nil
}

// eachRecord hands fn every committed record of tp, from the log's start
// to its high-water mark, and returns the start.
func (w *world) eachRecord(ctx context.Context, tp broker.TopicPartition, fn func(broker.Record)) (start int64, err error) {
	start, hwm, err := w.cluster.Offsets(ctx, checkerClient, tp)
	if err != nil {
		return 0, err
	}
	for off := start; off < hwm; {
		res, err := w.cluster.Fetch(ctx, checkerClient, tp, off, 1000)
		if err != nil {
			return 0, err
		}
		if len(res.Records) == 0 {
			break
		}
		for _, rec := range res.Records {
			fn(rec)
		}
		off = res.Records[len(res.Records)-1].Offset + 1
	}
	return start, nil
}

func (r *run) check(ctx context.Context, c command.Check) error {
	r.begin(c.String())
	rep, err := r.l.checkWorld(ctx, r.w)
	r.say(EventCheck, "%s", rep.Summary())
	explained := whyFields(rep, c)
	if !slices.Contains(explained, "lost") {
		for _, m := range rep.LostMessages {
			r.say(EventCheck, "lost %s from %s: %s", m.MsgID, m.Client, m.Explained)
		}
	}
	for _, a := range rep.Ambiguous {
		r.say(EventCheck, "%s", a.Hint())
	}
	if c.Why && c.Field == "" && len(explained) == 0 {
		r.say(EventCheck, "nothing to list: every count with records behind it is 0")
	}
	for _, field := range explained {
		fs, n := rep.Explain(field)
		switch {
		case n == 0:
			r.say(EventCheck, "%s is 0: no record is behind it", field)
			continue
		case len(fs) == 0:
			r.say(EventCheck, "%s is %d: the checker lists no records behind it", field, n)
			continue
		}
		r.say(EventCheck, "%s %d, because:", field, n)
		for _, f := range fs {
			r.say(EventCheck, "  %s", f)
		}
		if more := n - checker.Listed(fs); more > 0 && field != "fetched" {
			r.say(EventCheck, "  … and %d more", more)
		}
	}
	return err
}

// whyFields are the counts a check explains: the one it names, or with
// a bare why every count that is not zero and has records behind it.
func whyFields(rep checker.Report, c command.Check) []string {
	switch {
	case !c.Why:
		return nil
	case c.Field != "":
		return []string{c.Field}
	}
	var out []string
	for _, name := range checker.Fields() {
		if fs, n := rep.Explain(name); n > 0 && len(fs) > 0 {
			out = append(out, name)
		}
	}
	return out
}

// DrainState is a check's progress while it drains: the logs and queues
// it has read of all it must read. A check waits for every partition to
// have a leader, and that can take seconds after a kill.
type DrainState struct {
	Done    int    `json:"done"`
	Total   int    `json:"total"`
	Reading string `json:"reading,omitempty"` // what it waits on now: "orders/1", "queues"
}

// drainStart records that a check has begun reading total logs and
// observers; the returned func ends it.
func (w *world) drainStart(total int) func() {
	w.mu.Lock()
	w.drain = &DrainState{Total: total}
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		w.drain = nil
		w.mu.Unlock()
	}
}

// drainAt says what the check reads now; done counts what it has read.
func (w *world) drainAt(done int, reading string) {
	w.mu.Lock()
	if w.drain != nil {
		w.drain.Done, w.drain.Reading = done, reading
	}
	w.mu.Unlock()
}

// drainState copies the running check's progress, nil when none runs.
func (w *world) drainState() *DrainState {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.drain == nil {
		return nil
	}
	d := *w.drain
	return &d
}

// TopicRecord is one record of a topic, where it sits and what it holds.
type TopicRecord struct {
	Partition int
	Offset    int64
	Key       string
	Value     string
}

// ReadTopic reads every committed record of topic, partition by partition,
// waiting as the checker does for each partition's leader and settled log.
// A challenge reads its dead-letter topic with it.
func (l *Lab) ReadTopic(ctx context.Context, topic string) ([]TopicRecord, error) {
	w, err := l.world()
	if err != nil {
		return nil, err
	}
	t, err := w.topic(topic)
	if err != nil {
		return nil, err
	}
	ctx, cancel := w.bind(ctx)
	defer cancel()
	ctx, cancel2 := context.WithTimeout(ctx, DrainTimeout)
	defer cancel2()
	var out []TopicRecord
	for _, p := range t.Partitions {
		tp := broker.TopicPartition{Topic: topic, Partition: p.Partition}
		if err := w.awaitSettled(ctx, tp); err != nil {
			return nil, err
		}
		_, err := w.eachRecord(ctx, tp, func(rec broker.Record) {
			out = append(out, TopicRecord{Partition: tp.Partition, Offset: rec.Offset, Key: string(rec.Key), Value: string(rec.Value)})
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
