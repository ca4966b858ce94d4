package groupcoord

import "errors"

// Errors callers branch on, always wrapped with the specifics.
var (
	// ErrInvalid: a request is malformed (no client id, no topics, a bad
	// strategy or session timeout, a negative offset).
	ErrInvalid = errors.New("invalid group request")
	// ErrUnknownGroup: the coordinator has no group by that name.
	ErrUnknownGroup = errors.New("unknown group")
	// ErrFenced: the group moved on without this member; its commit is
	// rejected and it must rejoin. Wrapped together with one of the three
	// errors below, which say why.
	ErrFenced = errors.New("fenced")
	// ErrUnknownMember: the member is not in the group (its session expired,
	// it left, or a new coordinator never heard of it).
	ErrUnknownMember = errors.New("unknown member")
	// ErrStaleGeneration: the member speaks for an older generation than the
	// group's.
	ErrStaleGeneration = errors.New("stale generation")
	// ErrNotAssigned: the partition is not assigned to the member in the
	// current generation.
	ErrNotAssigned = errors.New("partition not assigned to member")
	// ErrRebalanceInProgress: the group is rebalancing; the member must
	// rejoin.
	ErrRebalanceInProgress = errors.New("rebalance in progress")
	// ErrInconsistentStrategy: a member asked for another assignment
	// strategy than the group's members use.
	ErrInconsistentStrategy = errors.New("inconsistent assignment strategy")
)
