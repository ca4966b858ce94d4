package lab

import (
	"context"

	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
)

// feature is one family of commands beside the log's: consumer groups,
// queues, services, the checkout. The lab sends it its commands, asks it
// for the lab values it owns, and lets it add to what the checker sees.
// This file is the one place they are wired.
type feature interface {
	// exec runs one of the family's commands (see run.begin and run.say).
	exec(ctx context.Context, r *run, cmd command.Command) error
	// value reads a lab value the family owns: lag(G), depth(Q), rows(…),
	// or state(X) of one of its clients or services (ok false: not its name).
	value(ctx context.Context, w *world, v command.Value) (val any, ok bool, err error)
	// observe adds deliveries, side effects and queue fates to the check.
	observe(ctx context.Context, w *world, h *checker.History, o *checker.Observed) error
}

var (
	// consumerGroups runs consumer clients of the broker's groups (feature_groups.go).
	consumerGroups = groupsFeature{}
	// queues runs the broker's work queues and the lab's workers (feature_queues.go).
	queues = queuesFeature{}
	// serviceFamily runs the SQLite services of lab/services (feature_services.go).
	serviceFamily = servicesFeature{}
	// checkoutFamily sends buyers through the checkout and reads its measurements (feature_checkout.go).
	checkoutFamily = checkoutFeature{}
	// kafkaWire puts the Kafka protocol on the nodes (feature_kafka.go).
	kafkaWire = kafkaFeature{}
	// sqsWire puts Amazon SQS's API on the nodes (feature_sqs.go).
	sqsWire = sqsFeature{}
)

// features maps command names (Spec.Name) to the family that runs them.
var features = map[string]feature{
	"consumer":     consumerGroups,
	"seek":         consumerGroups,
	"queue create": queues,
	"send":         queues,
	"worker":       queues,
	"redrive":      queues,
	"service":      serviceFamily,
	"order":        serviceFamily,
	"sql":          serviceFamily,
	"buyers":       checkoutFamily,
	"buyers stop":  checkoutFamily,
	"kafka listen": kafkaWire,
	"kafka stop":   kafkaWire,
	"sqs listen":   sqsWire,
	"sqs stop":     sqsWire,
}

// valueFeatures maps lab value functions to the family that reads them.
var valueFeatures = map[string]feature{
	"lag":         consumerGroups,
	"lag_seconds": consumerGroups,
	"delivered":   consumerGroups,
	"processed":   consumerGroups,
	"idle":        consumerGroups,
	"workers":     consumerGroups,
	"depth":       queues,
	"inflight":    queues,
	"oldest_age":  queues,
	"throughput":  backPressure,
	"members":     backPressure,
	"rows":        serviceFamily,
	"retries":     retryValues,
	"retry_peak":  retryValues,
	// The checkout's measurements: p99(checkout), errors(checkout), …
	"p50":                checkoutFamily,
	"p99":                checkoutFamily,
	"arrived":            checkoutFamily,
	"answered":           checkoutFamily,
	"served":             checkoutFamily,
	"errors":             checkoutFamily,
	"no_thread":          checkoutFamily,
	"charged_but_failed": checkoutFamily,
	"busy":               checkoutFamily,
	"waiting":            checkoutFamily,
}

// stateFeatures are asked, in order, for state(X) when X is neither a node
// nor a load, before a plain client is reported up: a service that
// publishes as a client of its own name is crashed or stopped, not up.
var stateFeatures = []feature{consumerGroups, queues, serviceFamily}

// observers add to every check, in order.
var observers = []feature{consumerGroups, queues, serviceFamily, kafkaWire, sqsWire}
