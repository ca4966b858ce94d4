package broker

// The controller is a raft group with a replica on every node. Its state
// machine holds what must survive any single node: the topics, queues and
// exchanges with their configuration and replica placement, and the
// producer id counter.
// Commands reach it through controllerApply, which follows its leader.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/hashicorp/raft"
)

type controllerCmd struct {
	Op    string       `json:"op"` // "create-topic" or "alloc-pid"
	Topic *topicRecord `json:"topic,omitempty"`
	Queue *queueRecord `json:"queue,omitempty"` // "create-queue", "delete-queue"
	Bind  *bindRecord  `json:"bind,omitempty"`  // "create-exchange", "bind-queue"
}

type topicRecord struct {
	Config    TopicConfig `json:"config"`
	Placement [][]string  `json:"placement"` // partition → replica nodes, preferred leader first
	Seq       int         `json:"seq"`       // creation order
}

type controllerState struct {
	Topics  map[string]topicRecord `json:"topics"`
	NextPID int64                  `json:"next_pid"`
	Queues  queueMeta              `json:"queues"` // queues and exchanges
}

type controllerFSM struct {
	mu    sync.RWMutex
	state controllerState
}

func newControllerFSM() *controllerFSM {
	return &controllerFSM{state: controllerState{Topics: map[string]topicRecord{}, NextPID: 1}}
}

type controllerResult struct {
	pid int64
	err error
}

func (f *controllerFSM) Apply(l *raft.Log) interface{} {
	var cmd controllerCmd
	if err := json.Unmarshal(l.Data, &cmd); err != nil {
		return controllerResult{err: fmt.Errorf("malformed controller command: %w", err)}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch cmd.Op {
	case "create-topic":
		if cmd.Topic == nil {
			return controllerResult{err: fmt.Errorf("create-topic without a topic")}
		}
		name := cmd.Topic.Config.Name
		if _, ok := f.state.Topics[name]; ok {
			return controllerResult{err: fmt.Errorf("%w: %q", ErrTopicExists, name)}
		}
		rec := *cmd.Topic
		rec.Seq = len(f.state.Topics)
		f.state.Topics[name] = rec
		return controllerResult{}
	case "create-queue", "delete-queue", "create-exchange", "bind-queue":
		return f.state.applyQueueOp(cmd)
	case "alloc-pid":
		pid := f.state.NextPID
		f.state.NextPID++
		return controllerResult{pid: pid}
	}
	return controllerResult{err: fmt.Errorf("unknown controller command %q", cmd.Op)}
}

func (f *controllerFSM) topics() []topicRecord {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]topicRecord, 0, len(f.state.Topics))
	for _, t := range f.state.Topics {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

func (f *controllerFSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	data, err := json.Marshal(f.state)
	if err != nil {
		return nil, err
	}
	return &bytesSnapshot{data: data}, nil
}

func (f *controllerFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var st controllerState
	if err := json.NewDecoder(rc).Decode(&st); err != nil {
		return fmt.Errorf("restore controller: %w", err)
	}
	if st.Topics == nil {
		st.Topics = map[string]topicRecord{}
	}
	f.mu.Lock()
	f.state = st
	f.mu.Unlock()
	return nil
}

// controllerApply proposes a command to the controller group, following its
// leader until ctx ends.
func (c *Cluster) controllerApply(ctx context.Context, cmd controllerCmd) (controllerResult, error) {
	data, err := json.Marshal(cmd)
	if err != nil {
		return controllerResult{}, err
	}
	retried := false // a proposal before this one may have committed
	for {
		lead, err := c.waitReadyLeader(ctx, controllerGroup)
		if err != nil {
			return controllerResult{}, err
		}
		f := lead.raft().Apply(data, c.requestTimeout())
		if err := lead.wait(f); err != nil {
			// Not leader: nothing was written. Leadership lost or shut
			// down: it may have been; both commands are safe to repeat
			// (a repeated create is recognised below, a repeated
			// producer id only skips a number).
			if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipTransferInProgress) ||
				errors.Is(err, raft.ErrLeadershipLost) || errors.Is(err, raft.ErrRaftShutdown) {
				retried = true
				continue
			}
			return controllerResult{}, fmt.Errorf("controller: %w", err)
		}
		res := f.Response().(controllerResult)
		if retried && (errors.Is(res.err, ErrTopicExists) || errors.Is(res.err, ErrQueueExists) ||
			(cmd.Op == "delete-queue" && errors.Is(res.err, ErrUnknownQueue))) {
			return controllerResult{}, nil // our earlier proposal committed after all
		}
		return res, res.err
	}
}

// allocProducerID asks the controller for a new producer id.
func (c *Cluster) allocProducerID(ctx context.Context) (int64, error) {
	res, err := c.controllerApply(ctx, controllerCmd{Op: "alloc-pid"})
	if err != nil {
		return 0, fmt.Errorf("allocate producer id: %w", err)
	}
	c.events.emit(Event{Kind: EventProducerID, Group: controllerGroup, Text: fmt.Sprintf("controller handed out producer id %d", res.pid)})
	return res.pid, nil
}
