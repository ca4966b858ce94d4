package lab

import (
	"context"

	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/family"
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
	// serviceFamily runs the SQLite services of lab/services (package lab/serviceset).
	serviceFamily = packaged(func(w *world) family.Family { return w.svc })
	// checkoutFamily sends buyers through the checkout and reads its measurements (package lab/checkout).
	checkoutFamily = packaged(func(w *world) family.Family { return w.buyers })
	// kafkaWire puts the Kafka protocol on the nodes (package lab/kafka).
	kafkaWire = packaged(func(w *world) family.Family { return w.kafka })
	// sqsWire puts Amazon SQS's API on the nodes (feature_sqs.go).
	sqsWire = sqsFeature{}
)

// features maps command names (Spec.Name) to the family that runs them.
var features = map[string]feature{
	"consumer":     consumerGroups,
	"seek":         consumerGroups,
	"stall":        consumerGroups,
	"queue create": queues,
	"queue delete": queues,
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

// valueFamilies are asked, in order, for a lab value the lab does not read
// itself; the first whose value answers ok reads it. Which names a family
// reads is its own: package command lists the language's names, and each
// family's value says which of them are its. Consumer groups come before
// queues: delivered(X), processed(X) and workers(X) read a group, or hand
// over to the queues when X is a queue.
var valueFamilies = []feature{consumerGroups, queues, backPressure, serviceFamily, retryValues, checkoutFamily, sqsWire}

// stateFeatures are asked, in order, for state(X) when X is neither a node
// nor a load, before a plain client is reported up: a service that
// publishes as a client of its own name is crashed or stopped, not up.
var stateFeatures = []feature{consumerGroups, queues, serviceFamily}

// observers add to every check, in order.
var observers = []feature{consumerGroups, queues, serviceFamily, kafkaWire, sqsWire}

// packaged is a family that lives in a package of its own (lab/family):
// it gives the world's instance of the family, which the world made.
type packaged func(*world) family.Family

func (p packaged) exec(ctx context.Context, r *run, cmd command.Command) error {
	return p(r.w).Exec(ctx, r, cmd)
}

func (p packaged) value(ctx context.Context, w *world, v command.Value) (any, bool, error) {
	return p(w).Value(ctx, v)
}

func (p packaged) observe(ctx context.Context, w *world, h *checker.History, o *checker.Observed) error {
	return p(w).Observe(ctx, h, o)
}
