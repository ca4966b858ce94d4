package partlog

import "encoding/binary"

// Turning a closed segment's file bytes, in Kafka's format, back into the
// log's own batch encoding, and the record decoding that needs (see
// evict.go).

// encodeFromKafka is EncodeBatch(batchFromKafka(raw)) for raw, a batch of
// the lab's records in a segment file (uncompressed, without gaps),
// written straight from the file's records: a read of a closed segment
// turns each batch back this way, and going through a Batch would cost
// a few allocations a record. ok is false when raw is not such a batch.
func encodeFromKafka(raw []byte, kb *KafkaBatch) (out []byte, ok bool) {
	if kb.Attributes&kafkaCodecMask != 0 || kb.Count <= 0 || kb.LastOffset-kb.BaseOffset+1 != int64(kb.Count) {
		return nil, false
	}
	var pid int64
	var seq int32
	if kb.ProducerID >= 0 {
		pid, seq = kb.ProducerID, kb.BaseSequence
	}
	body := raw[KafkaBatchHeaderLen:kb.Size()]

	// One pass over the records finds what the header needs, and the size.
	type rec struct {
		ts         int64
		key, value []byte
		id         []byte
		r          kafkaRecord
		headers    int // not counting the id
	}
	recs := make([]rec, kb.Count)
	var baseTS, maxTS int64
	ids, hdrs, recBytes := 0, 0, 0
	hasHeaders := false
	p, prevTS := body, int64(0)
	for i := range recs {
		r, rest, ok := readKafkaRecordNoHeaders(p)
		if !ok || r.offsetDelta != int64(i) {
			return nil, false
		}
		p = rest
		ts := (kb.FirstTimestamp + r.tsDelta) * 1e6
		if i == 0 {
			baseTS, maxTS, prevTS = ts, ts, ts
		}
		maxTS = max(maxTS, ts)
		id, size, nh := r.msgIDAndHeaders()
		recs[i] = rec{ts: ts, key: r.key, value: r.value, id: id, r: r, headers: nh}
		ids += len(id)
		hasHeaders = hasHeaders || nh > 0
		hdrs += uvarintLen(uint64(nh)) + size
		recBytes += varintLen(ts-prevTS) + optBytesLen(r.key) + optBytesLen(r.value) + uvarintLen(uint64(len(id)))
		prevTS = ts
	}
	if len(p) != 0 {
		return nil, false
	}
	n := 1 + varintLen(pid) + varintLen(int64(seq)) + uvarintLen(uint64(kb.Count)) +
		varintLen(baseTS) + uvarintLen(uint64(maxTS)-uint64(baseTS)) + uvarintLen(uint64(ids)) + ids + recBytes
	if hasHeaders {
		n += uvarintLen(uint64(hdrs)) + hdrs
	}

	// Then it is written as AppendBatch writes it.
	out = make([]byte, 0, n)
	if hasHeaders {
		out = append(out, batchVersionHeaders)
	} else {
		out = append(out, batchVersion)
	}
	out = binary.AppendVarint(out, pid)
	out = binary.AppendVarint(out, int64(seq))
	out = binary.AppendUvarint(out, uint64(kb.Count))
	out = binary.AppendVarint(out, baseTS)
	out = binary.AppendUvarint(out, uint64(maxTS)-uint64(baseTS))
	out = binary.AppendUvarint(out, uint64(ids))
	for i := range recs {
		out = append(out, recs[i].id...)
	}
	if hasHeaders {
		out = binary.AppendUvarint(out, uint64(hdrs))
		for i := range recs {
			out = binary.AppendUvarint(out, uint64(recs[i].headers))
			recs[i].r.eachHeader(func(k, v []byte) {
				out = binary.AppendUvarint(out, uint64(len(k)))
				out = append(out, k...)
				out = appendOptBytes(out, v)
			})
		}
	}
	prevTS = baseTS
	for i := range recs {
		r := &recs[i]
		out = binary.AppendVarint(out, r.ts-prevTS)
		out = appendOptBytes(out, r.key)
		out = appendOptBytes(out, r.value)
		out = binary.AppendUvarint(out, uint64(len(r.id)))
		prevTS = r.ts
	}
	if len(out) != n {
		return nil, false
	}
	return out, true
}

// readKafkaRecordNoHeaders is readKafkaRecord leaving the headers in
// r.rawHeaders (count, then the bytes), unparsed.
func readKafkaRecordNoHeaders(p []byte) (r kafkaRecord, rest []byte, ok bool) {
	length, n := binary.Varint(p)
	if n <= 0 || length < 1 || length > int64(len(p)-n) {
		return r, nil, false
	}
	rest, p = p[n+int(length):], p[n+1:n+int(length)] // past the attributes
	varint := func() (int64, bool) {
		v, n := binary.Varint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		return v, true
	}
	bytesField := func() ([]byte, bool) {
		l, ok := varint()
		if !ok || l > int64(len(p)) {
			return nil, false
		}
		if l < 0 {
			return nil, true
		}
		b := p[:l:l]
		p = p[l:]
		return b, true
	}
	var ok1, ok2, ok3, ok4 bool
	r.tsDelta, ok1 = varint()
	r.offsetDelta, ok2 = varint()
	r.key, ok3 = bytesField()
	r.value, ok4 = bytesField()
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return r, nil, false
	}
	r.rawHeaders = p
	// Check the headers' framing now, so later walks cannot fail.
	if !r.walkHeaders(func(k, v []byte) {}) {
		return r, nil, false
	}
	return r, rest, true
}

// walkHeaders calls f with each header of r's raw headers; false when
// they do not decode or bytes are left over.
func (r *kafkaRecord) walkHeaders(f func(k, v []byte)) bool {
	p := r.rawHeaders
	nh, n := binary.Varint(p)
	if n <= 0 || nh < 0 || nh > int64(len(p)) {
		return false
	}
	p = p[n:]
	field := func() ([]byte, bool) {
		l, n := binary.Varint(p)
		if n <= 0 || l > int64(len(p)-n) {
			return nil, false
		}
		p = p[n:]
		if l < 0 {
			return nil, true
		}
		b := p[:l:l]
		p = p[l:]
		return b, true
	}
	for range nh {
		k, ok1 := field()
		v, ok2 := field()
		if !ok1 || !ok2 {
			return false
		}
		f(k, v)
	}
	return len(p) == 0
}

// msgIDAndHeaders returns what batchFromKafka makes of r's headers: the
// message id (the first mqlab.msg-id header's value, or a later one's
// while the id found is empty), and the other headers' encoded size in
// a batch's header blob and their count.
func (r *kafkaRecord) msgIDAndHeaders() (id []byte, size, count int) {
	r.eachHeaderOrID(func(k, v []byte, isID bool) {
		if isID {
			id = v
			return
		}
		count++
		size += uvarintLen(uint64(len(k))) + len(k) + optBytesLen(v)
	})
	return id, size, count
}

// eachHeader calls f with each of r's headers that is not its id.
func (r *kafkaRecord) eachHeader(f func(k, v []byte)) {
	r.eachHeaderOrID(func(k, v []byte, isID bool) {
		if !isID {
			f(k, v)
		}
	})
}

func (r *kafkaRecord) eachHeaderOrID(f func(k, v []byte, isID bool)) {
	haveID := false
	r.walkHeaders(func(k, v []byte) {
		if string(k) == MsgIDHeader && !haveID {
			haveID = len(v) > 0
			f(k, v, true)
			return
		}
		f(k, v, false)
	})
}

// RestoringSuffix names the folder beside a partition's own where
// ReadLogToDir writes the log it reads, until MoveDir puts it in place.
const RestoringSuffix = ".restoring"
