package lab

import "time"

// RetryState is one retry a consumer or worker scheduled: when the attempt
// before it failed, and the backoff it chose.
type RetryState struct {
	Client  string        `json:"client"`
	Message string        `json:"message"` // the message id
	Attempt int           `json:"attempt"` // the attempt this retry will be (2 = the first retry)
	Failed  time.Time     `json:"failed"`  // lab time the attempt failed
	Delay   time.Duration `json:"delay"`   // the backoff chosen (0 for immediate)
}
