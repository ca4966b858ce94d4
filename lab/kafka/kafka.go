// Package kafka is the lab's family of commands that puts the Kafka
// protocol on a cluster's nodes (kafka listen, kafka stop), so real Kafka
// clients produce and consume against the lab, and hands the checker what
// they did. The listening stays on across cluster commands: a new cluster
// listens on the same ports (Follow).
package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/kafkawire"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/family"
	"github.com/mqlab/mqlab/lab/timeline"
)

// State is the Kafka listener as the screen shows it.
type State struct {
	Bootstrap string             `json:"bootstrap"`
	Clients   []kafkawire.Client `json:"clients,omitempty"`
}

// Listener is one world's Kafka family: the listener on its nodes, when
// there is one, and what its clients did.
type Listener struct {
	w family.World

	mu  sync.Mutex
	cfg *kafkawire.Config // what kafka listen asked for; nil when not listening
	srv *kafkawire.Server // nil unless listening now

	wire wireHistory
}

var _ family.Family = (*Listener)(nil)

// New returns a world's Kafka family, not listening.
func New(w family.World) *Listener { return &Listener{w: w} }

// Exec runs kafka listen and kafka stop.
func (k *Listener) Exec(_ context.Context, r family.Run, cmd command.Command) error {
	switch c := cmd.(type) {
	case command.KafkaListen:
		cfg := kafkawire.Config{Host: c.Host, Port: c.Port, AutoCreate: c.AutoCreate}
		r.Begin(c.String())
		k.Close()
		if err := k.listen(&cfg); err != nil {
			return err
		}
		k.mu.Lock()
		k.cfg = &cfg
		k.mu.Unlock()
		k.say(r, cfg)
		return nil
	case command.KafkaStop:
		r.Begin(c.String())
		k.mu.Lock()
		was := k.cfg != nil
		k.cfg = nil
		k.mu.Unlock()
		k.Close()
		if !was {
			r.Say(timeline.Outcome, "the nodes were not listening for Kafka clients")
			return nil
		}
		r.Say(timeline.Outcome, "the nodes stopped listening for Kafka clients; their connections are closed")
		return nil
	}
	return fmt.Errorf("%s: not a kafka command", cmd.Name())
}

// Follow listens on a new world's nodes as old did on the world it
// replaces: a cluster command keeps the Kafka listener on.
func (k *Listener) Follow(r family.Run, old *Listener) {
	old.mu.Lock()
	cfg := old.cfg
	old.mu.Unlock()
	if cfg == nil {
		return
	}
	k.mu.Lock()
	k.cfg = cfg
	k.mu.Unlock()
	if err := k.listen(cfg); err != nil {
		r.Say(timeline.Error, "the new cluster could not listen for Kafka clients: %v", err)
		return
	}
	k.say(r, *cfg)
}

func (k *Listener) say(r family.Run, cfg kafkawire.Config) {
	srv := k.server()
	var parts []string
	for _, n := range k.w.Cluster().Nodes() {
		parts = append(parts, n+" "+srv.Addr(n))
	}
	r.Say(timeline.Outcome, "Kafka protocol on %s; point a client at %s", strings.Join(parts, ", "), srv.Bootstrap())
	if !family.Loopback(cfg.Host) {
		r.Say(timeline.Outcome, "warning: %s is reachable from other machines, and the Kafka protocol as mqlab speaks it has no authentication: anyone who can reach it can produce, consume and commit", cfg.Host)
	}
}

// listen starts the world's listener with cfg.
func (k *Listener) listen(cfg *kafkawire.Config) error {
	own := *cfg
	own.Observer = &k.wire
	srv, err := kafkawire.Listen(k.w.Cluster(), own)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%w; another program (another mqlab?) listens there: choose another port with port=", err)
		}
		return err
	}
	k.mu.Lock()
	k.srv = srv
	k.mu.Unlock()
	return nil
}

func (k *Listener) server() *kafkawire.Server {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.srv
}

// Close stops listening and closes the clients' connections; what kafka
// listen asked for is kept for Follow.
func (k *Listener) Close() {
	k.mu.Lock()
	srv := k.srv
	k.srv = nil
	k.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// Clients are the client ids of the Kafka clients connected now.
func (k *Listener) Clients() []string {
	srv := k.server()
	if srv == nil {
		return nil
	}
	var out []string
	for _, c := range srv.Clients() {
		out = append(out, c.ID)
	}
	return out
}

// State is the listener for the screen; nil when not listening.
func (k *Listener) State() *State {
	srv := k.server()
	if srv == nil {
		return nil
	}
	return &State{Bootstrap: srv.Bootstrap(), Clients: srv.Clients()}
}

// Value reads no lab value: the Kafka clients' groups and topics are the
// broker's, read as any other.
func (k *Listener) Value(context.Context, command.Value) (any, bool, error) {
	return nil, false, nil
}

// Observe adds what the Kafka clients did: their produces, one per
// record, the records sent to their groups' members in fetch responses,
// and the offsets their groups committed. A fetch is not a delivery: the
// broker cannot see what a client hands its application, so the checker
// weighs fetches against commits.
func (k *Listener) Observe(_ context.Context, h *checker.History, _ *checker.Observed) error {
	k.wire.mu.Lock()
	defer k.wire.mu.Unlock()
	h.Produces = append(h.Produces, k.wire.produces...)
	h.Fetches = append(h.Fetches, k.wire.fetches...)
	h.Commits = append(h.Commits, k.wire.commits...)
	return nil
}

// wireHistory is what the world's Kafka clients did, as the nodes saw it.
type wireHistory struct {
	mu       sync.Mutex
	produces []checker.Produce
	index    map[string]int // message id → its produce
	fetches  []checker.Fetch
	commits  []checker.Commit
	seq      int                        // orders fetches and commits
	together map[handed]map[int64]int64 // for each record a client was handed, the last offset of the fetch that held it
}

// handed is a client and a partition it was handed records from.
type handed struct {
	client string
	tp     broker.TopicPartition
}

var fates = map[kafkawire.Fate]checker.Outcome{
	kafkawire.Acked: checker.Acknowledged, kafkawire.SentUnconfirmed: checker.Sent,
	kafkawire.Refused: checker.Failed, kafkawire.Unknown: checker.Unknown,
}

func (h *wireHistory) Produced(p kafkawire.Produced) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.index == nil {
		h.index = map[string]int{}
	}
	outcome := fates[p.Fate]
	for _, r := range p.Records {
		i, seen := h.index[r.MsgID]
		if !seen {
			h.index[r.MsgID] = len(h.produces)
			h.produces = append(h.produces, checker.Produce{MsgID: r.MsgID, Client: p.Client, Topic: p.Partition.Topic,
				Partition: p.Partition.Partition, Offset: r.Offset, Key: string(r.Key), Tombstone: r.Tombstone, Outcome: outcome})
			continue
		}
		if cur := &h.produces[i]; outcome.Outranks(cur.Outcome) {
			cur.Outcome, cur.Offset = outcome, r.Offset
		}
	}
}

func (h *wireHistory) Fetched(f kafkawire.Fetched) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.together == nil {
		h.together = map[handed]map[int64]int64{}
	}
	at := handed{f.Client, f.Partition}
	if h.together[at] == nil {
		h.together[at] = map[int64]int64{}
	}
	for _, r := range f.Records {
		h.seq++
		h.fetches = append(h.fetches, checker.Fetch{MsgID: r.MsgID, Client: f.Client, Conn: f.Conn, Group: f.Group, Groups: f.Groups,
			Member: f.Member, Generation: f.Generation, Topic: f.Partition.Topic, Partition: f.Partition.Partition,
			Offset: r.Offset, Key: string(r.Key), Seq: h.seq})
		if !f.Lost { // a lost answer handed the client nothing
			last := f.Records[len(f.Records)-1].Offset
			h.together[at][r.Offset] = max(h.together[at][r.Offset], last)
		}
	}
}

func (h *wireHistory) Committed(c kafkawire.Committed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tps := make([]broker.TopicPartition, 0, len(c.Offsets))
	for tp := range c.Offsets {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b broker.TopicPartition) int { return strings.Compare(a.String(), b.String()) })
	for _, tp := range tps {
		h.seq++
		h.commits = append(h.commits, checker.Commit{Client: c.Client, Conn: c.Conn, Group: c.Group, Member: c.Member,
			Generation: c.Generation, Topic: tp.Topic, Partition: tp.Partition, Offset: c.Offsets[tp], Seq: h.seq})
	}
}

// Seeked records that the lab moved a group's offset on a partition (a
// seek): if the group is a Kafka client's, what its members fetch again
// below where they were is a replay the learner asked for.
func (k *Listener) Seeked(group string, tp broker.TopicPartition, offset int64) {
	k.wire.mu.Lock()
	defer k.wire.mu.Unlock()
	k.wire.seq++
	k.wire.commits = append(k.wire.commits, checker.Commit{Group: group, Topic: tp.Topic, Partition: tp.Partition,
		Offset: offset, Generation: -1, Seek: true, Seq: k.wire.seq})
}

// HandedTogether says whether a Kafka client was handed offset and the
// one after it in one fetch. A program that has finished offset then
// holds the next record in the batch its poll returned, not only in its
// client's buffer, which a client drops when it learns its partitions
// have gone.
func (k *Listener) HandedTogether(client, topic string, partition int, offset int64) bool {
	k.wire.mu.Lock()
	defer k.wire.mu.Unlock()
	last, ok := k.wire.together[handed{client, broker.TopicPartition{Topic: topic, Partition: partition}}][offset]
	return ok && last > offset
}

// Actions counts what Kafka clients did through the listener: each record
// produced, each fetch answered and each commit.
func (k *Listener) Actions() int {
	k.wire.mu.Lock()
	defer k.wire.mu.Unlock()
	return len(k.wire.produces) + len(k.wire.fetches) + len(k.wire.commits)
}
