package raftnet

import (
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// What a replica's transport carried: the last exchange of each kind with
// each peer, as the fault network delivered it (or did not), for a panel
// in the spirit of RaftScope.

// ExchangeKind is the class of a raft RPC.
type ExchangeKind string

const (
	// ExchangeAppend is AppendEntries: with entries, or a heartbeat.
	ExchangeAppend ExchangeKind = "append"
	// ExchangeVote is RequestVote or RequestPreVote.
	ExchangeVote ExchangeKind = "vote"
)

// Exchange is one RPC this replica sent to a peer and what came of it.
type Exchange struct {
	Kind    ExchangeKind
	Peer    string        // the node it was sent to
	At      time.Time     // wall time it was sent
	Ago     time.Duration // how long before Exchanges was asked
	Term    uint64        // the sender's term in the request
	Entries int           // AppendEntries: how many entries (0: a heartbeat)
	PreVote bool          // a pre-vote (the candidate's trial before it raises its term)
	OK      bool          // the peer answered success (append) or granted the vote
	Lost    string        // why no answer came: "unreachable", "timed out", …; "" when one did
}

type exchangeKey struct {
	kind ExchangeKind
	peer string
}

type exchangeLog struct {
	mu   sync.Mutex
	last map[exchangeKey]Exchange
}

func (l *exchangeLog) note(x Exchange) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[exchangeKey]Exchange{}
	}
	l.last[exchangeKey{x.Kind, x.Peer}] = x
}

// Exchanges returns the last exchange of each kind with each peer,
// appends first, then by peer.
func (t *Transport) Exchanges() []Exchange {
	t.log.mu.Lock()
	defer t.log.mu.Unlock()
	out := make([]Exchange, 0, len(t.log.last))
	now := time.Now()
	for _, x := range t.log.last {
		x.Ago = now.Sub(x.At)
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Peer < out[j].Peer
	})
	return out
}

// record notes an RPC of call's that was sent at start.
func (t *Transport) record(target raft.ServerAddress, start time.Time, args, resp any, err error) {
	peer, _ := SplitAddr(target)
	x := Exchange{Peer: peer, At: start}
	switch a := args.(type) {
	case *raft.AppendEntriesRequest:
		x.Kind, x.Term, x.Entries = ExchangeAppend, a.Term, len(a.Entries)
		if r, ok := resp.(*raft.AppendEntriesResponse); ok && err == nil {
			x.OK = r.Success
		}
	case *raft.RequestVoteRequest:
		x.Kind, x.Term = ExchangeVote, a.Term
		if r, ok := resp.(*raft.RequestVoteResponse); ok && err == nil {
			x.OK = r.Granted
		}
	case *raft.RequestPreVoteRequest:
		x.Kind, x.Term, x.PreVote = ExchangeVote, a.Term, true
		if r, ok := resp.(*raft.RequestPreVoteResponse); ok && err == nil {
			x.OK = r.Granted
		}
	default:
		return
	}
	switch {
	case err == nil:
	case errors.Is(err, ErrUnreachable):
		x.Lost = "unreachable"
	default:
		x.Lost = "no answer"
	}
	t.log.note(x)
}
