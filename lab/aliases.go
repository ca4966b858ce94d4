package lab

// The names lab has always exported for types its sub-packages now keep:
// the screens, lessons and commands read them as before.

import (
	"github.com/mqlab/mqlab/lab/clients"
	"github.com/mqlab/mqlab/lab/clock"
	"github.com/mqlab/mqlab/lab/kafka"
	"github.com/mqlab/mqlab/lab/loads"
	"github.com/mqlab/mqlab/lab/series"
	"github.com/mqlab/mqlab/lab/serviceset"
	"github.com/mqlab/mqlab/lab/timeline"
)

// Clock is the lab's time: wall time scaled by a speed factor, which can
// be paused (package lab/clock keeps it).
type Clock = clock.Clock

// NewClock starts a clock at the current wall time, running at 1x.
func NewClock() *Clock { return clock.New() }

// The timeline's types under the names the lab has always given them
// (package lab/timeline keeps them).
type (
	// Event is one line of the timeline.
	Event = timeline.Event
	// EventKind says where a timeline event comes from.
	EventKind = timeline.Kind
	// ServiceEvent is what a service reported: one SQL statement it ran,
	// with its arguments, or a step of its work.
	ServiceEvent = timeline.ServiceEvent
	// Subscription delivers every timeline event, Detail ones included, as
	// it happens. A subscriber that falls behind loses events rather than
	// slowing the lab; Dropped counts them.
	Subscription = timeline.Subscription
)

// KafkaState is the Kafka listener as the screen shows it (package
// lab/kafka).
type KafkaState = kafka.State

// LoadState is one generator as the screens show it (package lab/loads).
type LoadState = loads.State

// Load states.
const (
	LoadWaiting = loads.Waiting // after= has not passed yet
	LoadRunning = loads.Running
	LoadStopped = loads.Stopped // finished, or stopped by load stop; nothing in flight
)

// SeriesState is one lab value sampled every SeriesEvery of lab time
// (package lab/series).
type SeriesState = series.State

const (
	// SeriesEvery is the lab time between two samples of a series.
	SeriesEvery = series.Every
	// SeriesLen bounds every series: the newest two minutes of lab time.
	SeriesLen = series.Len
)

type (
	// ServiceState is one service as the screens show it (package
	// lab/serviceset).
	ServiceState = serviceset.ServiceState
	// TableState is a window on one of a service's tables: its newest rows.
	TableState = serviceset.TableState
)

// SnapshotRows is how many of a table's newest rows a snapshot carries.
const SnapshotRows = serviceset.SnapshotRows

// RetryState is one retry a consumer or worker scheduled (package
// lab/clients).
type RetryState = clients.Retry

// RetryWindow is retry_peak's window of lab time.
const RetryWindow = clients.RetryWindow

// RetryPeak is the most of client's retries among rs that came back
// within one RetryWindow: what retry_peak(client) reads, for a screen
// that draws a snapshot's retries.
func RetryPeak(rs []RetryState, client string) int { return clients.PeakOf(rs, client) }

// Kinds of timeline event.
const (
	EventBroker  = timeline.Broker
	EventCommand = timeline.Command
	EventOutcome = timeline.Outcome
	EventLoad    = timeline.Load
	EventClock   = timeline.Clock
	EventWait    = timeline.Wait
	EventExpect  = timeline.Expect
	EventCheck   = timeline.Check
	EventError   = timeline.Error
	EventSQL     = timeline.SQL
	EventService = timeline.Service
	EventNote    = timeline.Note
	EventClient  = timeline.Client
)

// InternalName reports whether a topic, partition or raft group's name is
// one of the broker's internal topics ("__consumer_offsets/0").
func InternalName(name string) bool { return timeline.InternalName(name) }
