package partlog

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DumpFile describes a segment file the way Kafka's kafka-dump-log does:
// for a .log file one line per batch (offsets, count, epoch, position,
// size, CRC) and, with records, one line per record under it; for an
// .index its offset → position entries, for a .timeindex its timestamp →
// offset entries. name is the file's name (its suffix says its kind, its
// base offset is read from it); data is its content. Damage is described
// in the output, never a panic: a torn tail, a bad CRC, a partial entry.
func DumpFile(name string, data []byte, records bool) ([]string, error) {
	d, err := Describe(name, data, records)
	return d.Lines, err
}

// A Dump is what Describe found in a segment file: the lines DumpFile
// prints, and the damage among them.
type Dump struct {
	Lines []string
	// Damage has one short line per damaged place: a batch whose CRC does
	// not hold, bytes at the end that are not a whole batch or entry. A
	// sound file has none.
	Damage []string
}

// Describe is DumpFile that also says what in the file is damaged, so a
// caller can fail on a damaged file after printing all it could read.
func Describe(name string, data []byte, records bool) (Dump, error) {
	base := filepath.Base(name)
	stem := base[:len(base)-len(filepath.Ext(base))]
	baseOffset, err := strconv.ParseInt(stem, 10, 64)
	if err != nil || baseOffset < 0 {
		return Dump{}, fmt.Errorf("%s: not a segment file: its name should be a base offset in 20 digits, like 00000000000000000000.log", base)
	}
	d := Dump{Lines: []string{"Dumping " + base}}
	switch filepath.Ext(base) {
	case LogSuffix:
		d.Lines = append(d.Lines, fmt.Sprintf("Log starting offset: %d", baseOffset))
		d.dumpLog(data, records)
		return d, nil
	case IndexSuffix:
		for i := 0; i+IndexEntrySize <= len(data); i += IndexEntrySize {
			rel, pos := binary.BigEndian.Uint32(data[i:]), binary.BigEndian.Uint32(data[i+4:])
			d.Lines = append(d.Lines, fmt.Sprintf("offset: %d position: %d", baseOffset+int64(rel), pos))
		}
		d.partialEntry(len(data), IndexEntrySize)
		return d, nil
	case TimeIndexSuffix:
		for i := 0; i+TimeIndexEntrySize <= len(data); i += TimeIndexEntrySize {
			ts, rel := int64(binary.BigEndian.Uint64(data[i:])), binary.BigEndian.Uint32(data[i+8:])
			d.Lines = append(d.Lines, fmt.Sprintf("timestamp: %d offset: %d", ts, baseOffset+int64(rel)))
		}
		d.partialEntry(len(data), TimeIndexEntrySize)
		return d, nil
	}
	return Dump{}, fmt.Errorf("%s: not a segment file: want a name ending in %s, %s or %s", base, LogSuffix, IndexSuffix, TimeIndexSuffix)
}

// partialEntry reports bytes at the end of an index of size bytes that
// are not a whole entry.
func (d *Dump) partialEntry(size, entry int) {
	if n := size % entry; n != 0 {
		d.Lines = append(d.Lines, fmt.Sprintf("%d bytes at the end are not a whole entry (an entry takes %d)", n, entry))
		d.Damage = append(d.Damage, fmt.Sprintf("a torn entry of %d bytes at position %d", n, size-n))
	}
}

func (d *Dump) dumpLog(data []byte, records bool) {
	pos := int64(0)
	for len(data) > 0 {
		b, err := ParseKafkaBatch(data)
		if err != nil {
			d.Lines = append(d.Lines, fmt.Sprintf("position: %d: %d bytes that are not a whole batch: %v", pos, len(data), strings.TrimPrefix(err.Error(), ErrCorrupt.Error()+": ")))
			d.Damage = append(d.Damage, fmt.Sprintf("%d bytes at position %d that are not a whole batch", len(data), pos))
			return
		}
		if !b.CRCValid {
			d.Damage = append(d.Damage, fmt.Sprintf("the batch at position %d (offsets %d–%d) fails its CRC", pos, b.BaseOffset, b.LastOffset))
		}
		line := fmt.Sprintf("baseOffset: %d lastOffset: %d count: %d partitionLeaderEpoch: %d position: %d size: %d CreateTime: %d",
			b.BaseOffset, b.LastOffset, b.Count, b.LeaderEpoch, pos, b.Size(), b.MaxTimestamp)
		if b.ProducerID >= 0 {
			line += fmt.Sprintf(" producerId: %d producerEpoch: %d baseSequence: %d", b.ProducerID, b.ProducerEpoch, b.BaseSequence)
		}
		line += fmt.Sprintf(" compresscodec: %s crcValid: %t", codecName(b.Attributes&7), b.CRCValid)
		d.Lines = append(d.Lines, line)
		if records && b.Attributes&7 == 0 {
			lines, ok := dumpRecords(data[KafkaBatchHeaderLen:b.Size()], b)
			d.Lines = append(d.Lines, lines...)
			if !ok && b.CRCValid { // a failed CRC already says the batch is damaged
				d.Damage = append(d.Damage, fmt.Sprintf("the records of the batch at position %d do not decode", pos))
			}
		}
		data, pos = data[b.Size():], pos+b.Size()
	}
}

func codecName(c int16) string {
	if c >= 0 && int(c) < len(codecNames) {
		return codecNames[c]
	}
	return "unknown(" + strconv.Itoa(int(c)) + ")"
}

var codecNames = [...]string{"none", "gzip", "snappy", "lz4", "zstd"}

// dumpRecords describes the uncompressed records p of batch b, one line
// each, as kafka-dump-log --print-data-log does; ok is false when one of
// them does not decode.
func dumpRecords(p []byte, b KafkaBatch) (out []string, ok bool) {
	for i := int32(0); i < b.Count; i++ {
		r, rest, ok := readKafkaRecord(p)
		if !ok {
			return append(out, fmt.Sprintf("| record %d does not decode", i)), false
		}
		p = rest
		line := fmt.Sprintf("| offset: %d CreateTime: %d keySize: %d valueSize: %d", b.BaseOffset+r.offsetDelta, b.FirstTimestamp+r.tsDelta, len(r.key), len(r.value))
		if r.key != nil {
			line += " key: " + printable(r.key)
		}
		for _, h := range r.headers {
			line += fmt.Sprintf(" header: %s=%s", h.Key, printable(h.Value))
		}
		line += " payload: " + printable(r.value)
		out = append(out, line)
	}
	return out, true
}

type kafkaRecord struct {
	tsDelta, offsetDelta int64
	key, value           []byte
	headers              []Header
	rawHeaders           []byte // readKafkaRecordNoHeaders's: the header count and headers, undecoded
}

// readKafkaRecord reads one record of an uncompressed batch, bounds
// checked: ok is false for damaged bytes.
func readKafkaRecord(p []byte) (r kafkaRecord, rest []byte, ok bool) {
	r, rest, ok = readKafkaRecordNoHeaders(p)
	if !ok {
		return r, nil, false
	}
	r.walkHeaders(func(k, v []byte) { r.headers = append(r.headers, Header{Key: string(k), Value: v}) })
	r.rawHeaders = nil
	return r, rest, true
}

// printable shows b as text when it is short valid UTF-8 without control
// characters, and as a byte count otherwise.
func printable(b []byte) string {
	if len(b) > 64 || !utf8.Valid(b) || strings.ContainsFunc(string(b), func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Sprintf("(%d bytes)", len(b))
	}
	return string(b)
}
