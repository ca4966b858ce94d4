package lab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

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
	srv, err := kafkawire.Listen(w.cluster, *cfg)
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

func (kafkaFeature) observe(context.Context, *world, *checker.History, *checker.Observed) error {
	return nil
}
