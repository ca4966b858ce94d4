package lab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/kafkawire"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
)

// kafkaFeature puts the Kafka protocol on the cluster's nodes, so real
// Kafka clients produce and consume against the lab. The listening stays
// on across cluster commands: a new cluster listens on the same ports.
type kafkaFeature struct{}

// KafkaState is the Kafka listener as the screen shows it.
type KafkaState struct {
	Bootstrap string             `json:"bootstrap"`
	Clients   []kafkawire.Client `json:"clients,omitempty"`
}

func (kafkaFeature) exec(ctx context.Context, r *run, cmd command.Command) error {
	switch c := cmd.(type) {
	case command.KafkaListen:
		cfg := kafkawire.Config{Host: c.Host, Port: c.Port, AutoCreate: c.AutoCreate}
		r.begin(c.String())
		r.w.closeKafka()
		if err := r.l.listenKafka(r.w, &cfg); err != nil {
			return err
		}
		r.l.mu.Lock()
		r.l.kafka = &cfg
		r.l.mu.Unlock()
		r.sayKafka(cfg)
		return nil
	case command.KafkaStop:
		r.begin(c.String())
		r.l.mu.Lock()
		was := r.l.kafka != nil
		r.l.kafka = nil
		r.l.mu.Unlock()
		r.w.closeKafka()
		if !was {
			r.say(EventOutcome, "the nodes were not listening for Kafka clients")
			return nil
		}
		r.say(EventOutcome, "the nodes stopped listening for Kafka clients; their connections are closed")
		return nil
	}
	return fmt.Errorf("%s: not a kafka command", cmd.Name())
}

func (r *run) sayKafka(cfg kafkawire.Config) {
	srv := r.w.kafkaServer()
	var parts []string
	for _, n := range r.w.cluster.Nodes() {
		parts = append(parts, n+" "+srv.Addr(n))
	}
	r.say(EventOutcome, "Kafka protocol on %s; point a client at %s", strings.Join(parts, ", "), srv.Bootstrap())
	if !loopback(cfg.Host) {
		r.say(EventOutcome, "warning: %s is reachable from other machines, and the Kafka protocol as mqlab speaks it has no authentication: anyone who can reach it can produce, consume and commit", cfg.Host)
	}
}

func loopback(host string) bool {
	if host == "" || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// listenKafka starts w's listener with cfg.
func (l *Lab) listenKafka(w *world, cfg *kafkawire.Config) error {
	own := *cfg
	own.Observer = &w.wire
	srv, err := kafkawire.Listen(w.cluster, own)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%w; another program (another mqlab?) listens there: choose another port with port=", err)
		}
		return err
	}
	w.mu.Lock()
	w.kafka = srv
	w.mu.Unlock()
	return nil
}

// relistenKafka gives a new world the listener the lab had.
func (r *run) relistenKafka() {
	r.l.mu.Lock()
	cfg := r.l.kafka
	r.l.mu.Unlock()
	if cfg == nil {
		return
	}
	if err := r.l.listenKafka(r.w, cfg); err != nil {
		r.say(EventError, "the new cluster could not listen for Kafka clients: %v", err)
		return
	}
	r.sayKafka(*cfg)
}

func (w *world) kafkaServer() *kafkawire.Server {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.kafka
}

func (w *world) closeKafka() {
	w.mu.Lock()
	srv := w.kafka
	w.kafka = nil
	w.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// kafkaClients are the client ids of the Kafka clients connected now.
func (w *world) kafkaClients() []string {
	srv := w.kafkaServer()
	if srv == nil {
		return nil
	}
	var out []string
	for _, c := range srv.Clients() {
		out = append(out, c.ID)
	}
	return out
}

func (w *world) kafkaState() *KafkaState {
	srv := w.kafkaServer()
	if srv == nil {
		return nil
	}
	return &KafkaState{Bootstrap: srv.Bootstrap(), Clients: srv.Clients()}
}

func (kafkaFeature) value(context.Context, *world, command.Value) (any, bool, error) {
	return nil, false, nil
}

// observe adds what the Kafka clients did: their produces, one per
// record, and the records their group members fetched, as deliveries and
// as work done in the order fetched (a wire client's work is its own).
func (kafkaFeature) observe(_ context.Context, w *world, h *checker.History, _ *checker.Observed) error {
	w.wire.mu.Lock()
	defer w.wire.mu.Unlock()
	h.Produces = append(h.Produces, w.wire.produces...)
	h.Deliveries = append(h.Deliveries, w.wire.deliveries...)
	for _, d := range w.wire.deliveries {
		h.Done = append(h.Done, checker.Done{MsgID: d.MsgID, Client: d.Client, Group: d.Group, Topic: d.Topic, Key: d.Key})
	}
	return nil
}

// wireHistory is what the world's Kafka clients did, as the nodes saw it.
type wireHistory struct {
	mu         sync.Mutex
	produces   []checker.Produce
	index      map[string]int // message id → its produce
	deliveries []checker.Delivery
	together   map[handed]map[int64]int64 // for each record a client was handed, the last offset of the fetch that held it
}

// handed is a client and a partition it was handed records from.
type handed struct {
	client string
	tp     broker.TopicPartition
}

// rank orders what a client can learn of a record: a retry that was
// acknowledged outranks the attempt whose answer was lost.
var rank = map[checker.Outcome]int{checker.Failed: 0, checker.Sent: 1, checker.Unknown: 2, checker.Acknowledged: 3}

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
				Partition: p.Partition.Partition, Offset: r.Offset, Key: string(r.Key), Outcome: outcome})
			continue
		}
		if cur := &h.produces[i]; rank[outcome] > rank[cur.Outcome] {
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
		h.deliveries = append(h.deliveries, checker.Delivery{MsgID: r.MsgID, Client: f.Client, Group: f.Group, Topic: f.Partition.Topic, Key: string(r.Key)})
		last := f.Records[len(f.Records)-1].Offset
		h.together[at][r.Offset] = max(h.together[at][r.Offset], last)
	}
}

// HandedTogether says whether a Kafka client was handed offset and the
// one after it in one fetch. A program that has finished offset then
// holds the next record in the batch its poll returned, not only in its
// client's buffer, which a client drops when it learns its partitions
// have gone.
func (l *Lab) HandedTogether(client, topic string, partition int, offset int64) bool {
	w, err := l.world()
	if err != nil {
		return false
	}
	w.wire.mu.Lock()
	defer w.wire.mu.Unlock()
	last, ok := w.wire.together[handed{client, broker.TopicPartition{Topic: topic, Partition: partition}}][offset]
	return ok && last > offset
}
