package kafkawire

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
)

// requestTimeout is a request's own timeout, bounded so a client asking
// for hours does not hold a node's goroutine that long.
func requestTimeout(ms int32, def time.Duration) time.Duration {
	if ms <= 0 {
		return def
	}
	return min(time.Duration(ms)*time.Millisecond, 5*time.Minute)
}

func handleProduce(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.ProduceRequest)
	if req.TransactionID != nil {
		return nil, errors.New("sent a transactional produce; mqlab has no transactions")
	}
	var acks broker.Acks
	switch req.Acks {
	case 0:
		acks = broker.AcksNone
	case 1:
		acks = broker.AcksLeader
	case -1:
		acks = broker.AcksAll
	default:
		return nil, fmt.Errorf("sent a produce with acks=%d; Kafka's are 0, 1 and -1 (all)", req.Acks)
	}
	ctx, cancel := context.WithTimeout(r.ctx, requestTimeout(req.TimeoutMillis, 30*time.Second))
	defer cancel()
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition = p.Partition
			tp := broker.TopicPartition{Topic: t.Topic, Partition: int(p.Partition)}
			ans, err := r.produce(ctx, tp, p.Records, acks)
			if ferr := r.netErr(err); ferr != nil {
				return nil, ferr
			}
			var be *errBatch
			switch {
			case errors.As(err, &be):
				rp.ErrorCode, rp.ErrorMessage = be.code, errText(err)
				r.cn.report(fmt.Sprintf("sent a batch for %s that was refused: %v", tp, err))
			case err != nil:
				rp.ErrorCode, rp.ErrorMessage = code(err), errText(err)
				r.answered("produce to "+tp.String(), rp.ErrorCode, err)
			default:
				rp.BaseOffset, rp.LogStartOffset = ans.BaseOffset, ans.LogStart
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if acks == broker.AcksNone {
		return nil, nil // Kafka answers no produce with acks=0
	}
	return resp, nil
}

// produce writes one partition's batches, in order; the answer is the
// first batch's base offset.
func (r *request) produce(ctx context.Context, tp broker.TopicPartition, records []byte, acks broker.Acks) (broker.ProduceAnswer, error) {
	d, ok := r.batches[tp]
	if !ok {
		d.batches, d.err = readBatchesFor(r.client, tp, records, r.cn.s.cfg.Observer != nil, nil)
	}
	batches, err := d.batches, d.err
	if err != nil {
		return broker.ProduceAnswer{}, err
	}
	var first broker.ProduceAnswer
	for i, b := range batches {
		ans, err := r.front().Partition(tp).ProduceKafka(ctx, b.WireBatch, acks)
		if errors.Is(err, broker.ErrDuplicateSequence) {
			// Older than the five batches the partition remembers: it was
			// written, and Kafka answers so without an offset.
			ans, err = broker.ProduceAnswer{BaseOffset: -1}, nil
		}
		r.observeProduce(tp, b.records, acks, ans, err)
		if err != nil {
			return broker.ProduceAnswer{}, err
		}
		if i == 0 {
			first = ans
		}
	}
	return first, nil
}

// observeProduce tells the observer what the client will learn of a
// batch: acknowledged with its offsets, refused, or unknown when the
// answer is lost or the write may or may not have happened.
func (r *request) observeProduce(tp broker.TopicPartition, recs []broker.BatchRecord, acks broker.Acks, ans broker.ProduceAnswer, err error) {
	obs := r.cn.s.cfg.Observer
	if obs == nil {
		return
	}
	p := Produced{Client: r.client, Partition: tp, Records: make([]ObservedRecord, len(recs))}
	switch {
	case err == nil && acks == broker.AcksNone:
		p.Fate = SentUnconfirmed
	case err == nil:
		p.Fate = Acked
	case r.netErr(err) != nil, errors.Is(err, broker.ErrUnknownOutcome):
		p.Fate = Unknown
	default:
		p.Fate = Refused
	}
	for i, rec := range recs {
		p.Records[i] = ObservedRecord{MsgID: rec.MsgID, Key: rec.Key, Offset: -1, Tombstone: rec.Value == nil}
		if p.Fate == Acked && ans.BaseOffset >= 0 {
			p.Records[i].Offset = ans.BaseOffset + int64(i)
		}
	}
	obs.Produced(p)
}

func handleInitProducerID(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	if req.TransactionalID != nil {
		resp.ErrorCode = codeInvalidRequest
		return resp, nil
	}
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	pid, err := r.front().InitProducerID(ctx)
	if ferr := r.netErr(err); ferr != nil {
		return nil, ferr
	}
	if err != nil {
		resp.ErrorCode = codeCoordinatorNotAvailable
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = pid, 0
	return resp, nil
}
