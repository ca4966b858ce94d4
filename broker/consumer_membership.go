package broker

// A consumer's membership of its group: the heartbeat loop, giving up
// its partitions when the group rebalances, and joining the next
// generation.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mqlab/mqlab/broker/groupcoord"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// loop heartbeats, rejoins when the group rebalances and auto-commits.
func (cn *Consumer) loop() {
	defer cn.c.wg.Done()
	defer close(cn.done)
	t := time.NewTicker(cn.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-cn.ctx.Done():
			return
		case <-cn.c.stop:
			return
		case <-t.C:
		case <-cn.wake:
		}
		if cn.paused.Load() {
			continue
		}
		cn.mu.Lock()
		join := cn.needJoin
		cn.mu.Unlock()
		if join {
			cn.rejoin(cn.ctx, false)
			continue
		}
		cn.heartbeat()
		cn.autoCommit(false)
	}
}

// heartbeat sends one heartbeat and reacts to the answer.
func (cn *Consumer) heartbeat() {
	cn.mu.Lock()
	member, gen := cn.memberID, cn.generation
	coord := cn.coord
	cn.mu.Unlock()
	ctx, cancel := cn.requestCtx(cn.ctx)
	defer cancel()
	var res groupcoord.HeartbeatResult
	err := cn.c.coordinatorCall(ctx, cn.cfg.ClientID, cn.cfg.Group, raftnet.RequestMetadata, &coord, func(co *coordinator) error {
		var e error
		res, e = co.heartbeat(cn.cfg.Group, member, gen)
		return e
	})
	cn.mu.Lock()
	cn.coord = coord
	switch {
	case err == nil:
		for gtp, off := range res.Seeks {
			tp := fromGC(gtp)
			if _, ok := cn.pos[tp]; ok {
				cn.pos[tp], cn.consumed[tp], cn.committed[tp] = off, off, off
				cn.epoch++
			}
		}
	case errors.Is(err, ErrUnknownMember):
		cn.memberID = ""
		cn.needJoin = true
	case errors.Is(err, ErrStaleGeneration):
		cn.needJoin = true
	}
	join, graceful := cn.needJoin, errors.Is(err, ErrRebalanceInProgress)
	cn.mu.Unlock()
	if join || graceful {
		cn.rejoin(cn.ctx, graceful)
	}
}

// releaseLocked marks every record handed out so far as processed.
func (cn *Consumer) releaseLocked() {
	cn.delivered = false
	close(cn.released)
	cn.released = make(chan struct{})
}

// rejoin gives up the partitions and joins the group until the new
// generation is assigned. In a graceful rebalance (the group asked, the
// member is still in it) it first lets the application finish the records
// it holds, and with auto-commit commits what was processed; a fenced
// member's partitions already belong to others.
func (cn *Consumer) rejoin(parent context.Context, graceful bool) error {
	cn.mu.Lock()
	cn.revoking = true
	wait := graceful && cn.delivered && cn.generation > 0
	released := cn.released
	cn.mu.Unlock()
	if wait {
		t := time.NewTimer(cn.cfg.SessionTimeout / 3)
		select {
		case <-released:
		case <-t.C:
		case <-parent.Done():
		}
		t.Stop()
	}
	cn.mu.Lock()
	var revoke map[TopicPartition]int64
	if graceful && cn.cfg.AutoCommit && cn.generation > 0 {
		revoke = cn.commitableLocked(cn.consumed)
	}
	member, gen := cn.memberID, cn.generation
	cn.assignment, cn.generation = nil, 0
	cn.pos = map[TopicPartition]int64{}
	cn.epoch++
	cn.needJoin = true
	cn.delivered = false
	if cn.state == "active" {
		cn.state = "joining"
	}
	cn.mu.Unlock()
	if len(revoke) > 0 {
		ctx, cancel := cn.requestCtx(parent)
		cn.sendCommit(ctx, member, gen, revoke) // best effort: if fenced, the new owner starts from the last commit
		cancel()
	}
	// The coordinator answers once every member rejoined or the rebalance
	// deadline (the longest session timeout) passed.
	ctx, cancel := context.WithTimeout(parent, 2*cn.cfg.SessionTimeout+cn.c.requestTimeout())
	defer cancel()
	for attempt := 0; ; attempt++ {
		cn.mu.Lock()
		member, coord := cn.memberID, cn.coord
		cn.mu.Unlock()
		var res groupcoord.JoinResult
		err := cn.c.coordinatorCall(ctx, cn.cfg.ClientID, cn.cfg.Group, raftnet.RequestMetadata, &coord, func(co *coordinator) error {
			var e error
			res, e = co.join(ctx, groupcoord.JoinRequest{Group: cn.cfg.Group, MemberID: member, ClientID: cn.cfg.ClientID,
				Topics: cn.cfg.Topics, Strategy: cn.cfg.Strategy, SessionTimeout: cn.cfg.SessionTimeout})
			return e
		})
		cn.mu.Lock()
		cn.coord = coord
		if errors.Is(err, ErrUnknownMember) && member != "" && attempt < 3 {
			cn.memberID = "" // the group forgot us: join as a new member
			cn.mu.Unlock()
			continue
		}
		err = cn.joinedLocked(res, err)
		cn.mu.Unlock()
		return err
	}
}

// joinedLocked takes the answer to a join: the generation, the partitions
// and where to start on each.
func (cn *Consumer) joinedLocked(res groupcoord.JoinResult, err error) error {
	if err = gcErr(err); err != nil {
		if errors.Is(err, ErrInvalid) || errors.Is(err, ErrInconsistentStrategy) {
			return err
		}
		return fmt.Errorf("join group %s: %w", cn.cfg.Group, err)
	}
	if cn.state != "joining" {
		return fmt.Errorf("%w: %s has %s", ErrConsumerClosed, cn.cfg.ClientID, cn.state)
	}
	cn.memberID, cn.generation = res.MemberID, res.Generation
	cn.assignment = fromGCs(res.Assignment)
	cn.pos = map[TopicPartition]int64{}
	cn.consumed = map[TopicPartition]int64{}
	cn.committed = map[TopicPartition]int64{}
	for gtp, off := range res.Committed {
		tp := fromGC(gtp)
		cn.pos[tp] = off // -1: the reset policy decides at the first poll
		if off >= 0 {
			cn.consumed[tp], cn.committed[tp] = off, off
		}
	}
	cn.epoch++
	cn.needJoin, cn.revoking, cn.delivered = false, false, false
	cn.state = "active"
	cn.lastCommit = time.Now()
	return nil
}

// StopHeartbeats simulates a member the group gives up on while it goes
// on working — a long pause of its process, a starved heartbeat thread:
// its heartbeats (and rejoins, and auto-commits) stop, but Poll and the
// commit methods still work, so it can act as the zombie it becomes once
// its session expires. ResumeHeartbeats undoes it.
func (cn *Consumer) StopHeartbeats() { cn.paused.Store(true) }

// ResumeHeartbeats restarts the heartbeats after StopHeartbeats; a member
// the group dropped meanwhile rejoins as a new member.
func (cn *Consumer) ResumeHeartbeats() { cn.paused.Store(false) }
