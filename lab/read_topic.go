package lab

import (
	"context"

	"github.com/mqlab/mqlab/broker"
)

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
