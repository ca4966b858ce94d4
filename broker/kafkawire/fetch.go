package kafkawire

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// handleFetch reads every partition asked for. When the answer holds
// fewer than MinBytes it waits, up to MaxWaitMillis, for a partition's
// log to grow, without spinning, and reads again.
func handleFetch(r *request, kr kmsg.Request) (kmsg.Response, error) {
	req := kr.(*kmsg.FetchRequest)
	wait := time.Duration(max(req.MaxWaitMillis, 0)) * time.Millisecond
	wait = min(wait, time.Minute)
	deadline := time.Now().Add(wait)
	for {
		var growth []<-chan struct{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				if ch := r.front().Partition(broker.TopicPartition{Topic: t.Topic, Partition: int(p.Partition)}).Growth(); ch != nil {
					growth = append(growth, ch)
				}
			}
		}
		resp, size, failed, splices, err := r.fetchOnce(req)
		if err != nil {
			return nil, err
		}
		left := time.Until(deadline)
		if size >= int(max(req.MinBytes, 1)) || failed || left <= 0 || len(growth) == 0 {
			r.splices = splices
			return resp, nil
		}
		if !awaitAny(r.ctx, growth, left) {
			r.splices = splices
			return resp, nil
		}
		closeSplices(splices) // the log grew: read again
	}
}

// awaitAny waits for one of chans to close, up to d; false when the time
// ran out or ctx ended first.
func awaitAny(ctx context.Context, chans []<-chan struct{}, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if len(chans) == 1 {
		select {
		case <-chans[0]:
			return true
		case <-ctx.Done():
			return false
		}
	}
	woke := make(chan struct{}, 1)
	for _, ch := range chans {
		go func() {
			select {
			case <-ch:
				select {
				case woke <- struct{}{}:
				default:
				}
			case <-ctx.Done():
			}
		}()
	}
	select {
	case <-woke:
		return true
	case <-ctx.Done():
		return false
	}
}

func closeSplices(splices []splice) {
	for _, s := range splices {
		s.file.File.Close()
	}
}

// fetchOnce reads every partition once; failed says a partition's answer
// is an error, which the client should hear at once. A partition whose
// leader writes segment files is answered with the files' batches as they
// are: its RecordBatches hold a marker, and splices the range to put in
// its place.
func (r *request) fetchOnce(req *kmsg.FetchRequest) (resp *kmsg.FetchResponse, total int, failed bool, splices []splice, err error) {
	defer func() {
		if err != nil {
			closeSplices(splices)
			splices = nil
		}
	}()
	resp = req.ResponseKind().(*kmsg.FetchResponse)
	limit := int(req.MaxBytes)
	if limit <= 0 {
		limit = 50 << 20
	}
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	for _, t := range req.Topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition = p.Partition
			rp.RecordBatches = []byte{} // empty, never null: librdkafka refuses a null record set
			tp := broker.TopicPartition{Topic: t.Topic, Partition: int(p.Partition)}
			max := min(int(p.PartitionMaxBytes), limit-total)
			if max <= 0 && total > 0 {
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			at := r.attribution(tp)
			res, err := r.front().Partition(tp).FetchFile(ctx, p.FetchOffset, max, p.CurrentLeaderEpoch, len(at.groups) > 0)
			if res.File != nil {
				if err != nil {
					res.File.File.Close()
				} else {
					sp := newSplice(res.File)
					splices = append(splices, sp)
					rp.RecordBatches = sp.marker
					total += int(res.File.Len)
				}
			}
			if ferr := r.netErr(err); ferr != nil {
				if errors.Is(err, raftnet.ErrReplyLost) && len(res.Records) > 0 {
					r.observeFetch(tp, at, res.Records, true)
				}
				return nil, 0, false, splices, ferr
			}
			rp.ErrorCode = code(err)
			failed = failed || err != nil
			r.answered("fetch of "+tp.String(), rp.ErrorCode, err)
			if err == nil {
				rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = res.HighWatermark, res.HighWatermark, res.LogStart
				if res.File == nil && len(res.Records) > 0 {
					rp.RecordBatches = appendBatches(nil, res.Records)
					total += len(rp.RecordBatches)
				}
				if len(res.Records) > 0 {
					r.observeFetch(tp, at, res.Records, false)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, total, failed, splices, nil
}

// attribution is who a fetch of tp is for, as the observer hears of it;
// no groups when there is no observer.
func (r *request) attribution(tp broker.TopicPartition) attribution {
	if r.cn.s.cfg.Observer == nil {
		return attribution{}
	}
	return r.cn.s.attribute(r.cn, r.client, tp)
}

// observeFetch tells the observer what was sent to a group's member, or
// to a client that may be one of several groups' members (at).
func (r *request) observeFetch(tp broker.TopicPartition, at attribution, recs []broker.Record, lost bool) {
	obs := r.cn.s.cfg.Observer
	if obs == nil {
		return
	}
	if len(at.groups) == 0 {
		return // not a group's: a client reading partitions it chose
	}
	f := Fetched{Client: r.client, Conn: r.cn.label, Member: at.member.id, Generation: at.generation,
		Partition: tp, Records: make([]ObservedRecord, len(recs)), Lost: lost}
	if len(at.groups) == 1 {
		f.Group = at.groups[0]
	} else {
		f.Groups = at.groups
	}
	for i, rec := range recs {
		f.Records[i] = ObservedRecord{MsgID: rec.MsgID, Key: rec.Key, Offset: rec.Offset}
	}
	obs.Fetched(f)
}
