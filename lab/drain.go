package lab

// DrainState is a check's progress while it drains: the logs and queues
// it has read of all it must read. A check waits for every partition to
// have a leader, and that can take seconds after a kill.
type DrainState struct {
	Done    int    `json:"done"`
	Total   int    `json:"total"`
	Reading string `json:"reading,omitempty"` // what it waits on now: "orders/1", "queues"
}

// drainStart records that a check has begun reading total logs and
// observers; the returned func ends it.
func (w *world) drainStart(total int) func() {
	w.mu.Lock()
	w.drain = &DrainState{Total: total}
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		w.drain = nil
		w.mu.Unlock()
	}
}

// drainAt says what the check reads now; done counts what it has read.
func (w *world) drainAt(done int, reading string) {
	w.mu.Lock()
	if w.drain != nil {
		w.drain.Done, w.drain.Reading = done, reading
	}
	w.mu.Unlock()
}

// drainState copies the running check's progress, nil when none runs.
func (w *world) drainState() *DrainState {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.drain == nil {
		return nil
	}
	d := *w.drain
	return &d
}
