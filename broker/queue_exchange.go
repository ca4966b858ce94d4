package broker

// Exchanges: a message published to one is copied to every queue bound
// to it, as a RabbitMQ fanout exchange or an SNS topic with SQS
// subscriptions does.

import (
	"context"
	"fmt"
	"slices"
)

// CreateExchange creates a fan-out exchange: a message published to it is
// sent as a copy to every queue bound to it.
func (c *Cluster) CreateExchange(ctx context.Context, name string) error {
	c.admin.Lock()
	defer c.admin.Unlock()
	if err := c.checkOpen(); err != nil {
		return err
	}
	if err := checkQueueName("exchange", name); err != nil {
		return fmt.Errorf("create exchange: %w", err)
	}
	c.mu.Lock()
	taken := c.nameTakenLocked(name)
	c.mu.Unlock()
	if taken != "" {
		return fmt.Errorf("create exchange: %w: %q is already %s", ErrQueueExists, name, taken)
	}
	if _, err := c.controllerApply(ctx, controllerCmd{Op: "create-exchange", Bind: &bindRecord{Exchange: name}}); err != nil {
		return fmt.Errorf("create exchange %s: %w", name, err)
	}
	c.mu.Lock()
	if c.queues.exchanges == nil {
		c.queues.exchanges = map[string][]string{}
	}
	c.queues.exchanges[name] = []string{}
	c.mu.Unlock()
	c.events.emit(Event{Kind: EventQueueCreated, Group: name, Text: fmt.Sprintf("exchange %s created: it copies each message to every queue bound to it", name)})
	return nil
}

// BindQueue binds a queue to an exchange. Binding twice changes nothing.
func (c *Cluster) BindQueue(ctx context.Context, exchange, queueName string) error {
	c.admin.Lock()
	defer c.admin.Unlock()
	if _, err := c.lookupQueue(queueName); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	if _, err := c.boundQueues(exchange); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	if _, err := c.controllerApply(ctx, controllerCmd{Op: "bind-queue", Bind: &bindRecord{Exchange: exchange, Queue: queueName}}); err != nil {
		return fmt.Errorf("bind %s to %s: %w", queueName, exchange, err)
	}
	c.mu.Lock()
	if !slices.Contains(c.queues.exchanges[exchange], queueName) {
		c.queues.exchanges[exchange] = append(c.queues.exchanges[exchange], queueName)
	}
	c.mu.Unlock()
	c.events.emit(Event{Kind: EventQueueCreated, Group: queueName, Text: fmt.Sprintf("queue %s bound to exchange %s", queueName, exchange)})
	return nil
}

// boundQueues lists the queues bound to an exchange.
func (c *Cluster) boundQueues(exchange string) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	bound, ok := c.queues.exchanges[exchange]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownExchange, exchange)
	}
	return slices.Clone(bound), nil
}
