package lab

import (
	"slices"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/clients"
	"github.com/mqlab/mqlab/lab/series"
)

// Snapshot is everything the screens show, copied at one moment. It shares
// no memory with the lab.
type Snapshot struct {
	Time   time.Time `json:"time"` // lab time
	Speed  float64   `json:"speed"`
	Paused bool      `json:"paused"`
	// Behind is the share of the last second's lab time the clock held
	// back for the lab's own work on a busy machine: 0 when it keeps up.
	Behind  float64         `json:"behind,omitempty"`
	Cluster broker.Snapshot `json:"cluster"`
	Clients []ClientState   `json:"clients"`
	Loads   []LoadState     `json:"loads"`
	// Consumers are the consumer clients, by name; their groups are in
	// Cluster.Groups.
	Consumers []ConsumerState `json:"consumers,omitempty"`
	// Workers are the queue workers, by name; their queues are in
	// Cluster.Queues.
	Workers []WorkerState `json:"workers,omitempty"`
	// Services are the services started in this cluster, by name, with
	// the newest rows of their tables.
	Services []ServiceState `json:"services,omitempty"`
	Retries  []RetryState   `json:"retries,omitempty"` // retries scheduled by consumers and workers, oldest first (the most recent 500)
	// Report is the last check's report, nil before the first; Checked is
	// the lab time it was made.
	Report   *checker.Report `json:"report,omitempty"`
	Checked  time.Time       `json:"checked,omitempty"`
	Timeline []Event         `json:"timeline"` // the most recent events, Detail ones left out
	// Series are lag(G) for every group and depth(Q) for every queue,
	// sampled every SeriesEvery of lab time (package lab/series).
	Series []SeriesState `json:"series,omitempty"`
	// Drain is a running check's progress, nil when no check runs.
	Drain *DrainState `json:"drain,omitempty"`
	// Kafka is the Kafka listener and its clients, nil when not listening.
	Kafka *KafkaState `json:"kafka,omitempty"`
	// SQS is the SQS listener and its clients, nil when not listening.
	SQS *SQSState `json:"sqs,omitempty"`
	// LogDir is the folder of the replicas' segment files: under it,
	// n2/orders-0/00000000000000000016.log and so on (see Lab.LogDir).
	LogDir string `json:"log_dir,omitempty"`
}

// ClientState is one client and what became of the messages it sent.
type ClientState struct {
	Name         string  `json:"name"`
	Kind         string  `json:"kind"` // "producer"
	State        string  `json:"state"`
	Produced     int     `json:"produced"`
	Acknowledged int     `json:"acknowledged"`
	Sent         int     `json:"sent"` // acks=0
	Failed       int     `json:"failed"`
	Unknown      int     `json:"unknown"`
	Pending      int     `json:"pending"`
	ProducerIDs  []int64 `json:"producer_ids,omitempty"` // of its idempotent producers
}

// Snapshot returns the lab's state now. Its Time is read last, so that
// nothing in it is newer than Time: the sampler and the clients go on while
// the parts are read, and a series sampled meanwhile must not end after the
// moment the snapshot says it shows.
func (l *Lab) Snapshot() (s Snapshot) {
	speed, paused := l.clock.Speed()
	s = Snapshot{Speed: speed, Paused: paused, Behind: l.clock.Behind(), Timeline: l.tl.Recent(l.opts.TimelineSize), LogDir: l.logDir}
	defer func() { s.Time = l.clock.Now() }()
	w, err := l.world()
	if err != nil {
		return s
	}
	s.Cluster = w.cluster.Snapshot()
	s.Loads = w.loads.States()
	s.Consumers = w.groups.states()
	s.Workers = w.queues.states()
	s.Services = w.svc.States()
	s.Series = w.series.States()
	series.Align(s.Series, s.Cluster)
	s.Drain = w.drainState()
	s.Kafka = w.kafka.State()
	s.SQS = w.sqsState()
	s.Retries = w.retries.Recent(clients.SnapshotRetries)
	w.mu.Lock()
	if w.report != nil {
		rep := w.report.Clone()
		s.Report, s.Checked = &rep, w.checked
	}
	byName := map[string]*ClientState{}
	for name, cl := range w.clients {
		cs := &ClientState{Name: name, Kind: "producer", State: "up"}
		cl.mu.Lock()
		for _, p := range cl.producers {
			if p.ID() != 0 {
				cs.ProducerIDs = append(cs.ProducerIDs, p.ID())
			}
		}
		cl.mu.Unlock()
		slices.Sort(cs.ProducerIDs)
		byName[name] = cs
	}
	for _, p := range w.history {
		cs := byName[p.Client]
		if cs == nil {
			continue
		}
		cs.Produced++
		switch p.Outcome {
		case checker.Acknowledged:
			cs.Acknowledged++
		case checker.Sent:
			cs.Sent++
		case checker.Failed:
			cs.Failed++
		case checker.Unknown:
			cs.Unknown++
		case checker.Pending:
			cs.Pending++
		}
	}
	w.mu.Unlock()
	for _, name := range w.clientNames() {
		if cs := byName[name]; cs != nil {
			s.Clients = append(s.Clients, *cs)
		}
	}
	return s
}
