package services

import "context"

type messageKey struct{}

// WithMessage names the message a service handles under ctx: the SQL
// events of that work carry its id as their Cause.
func WithMessage(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, messageKey{}, id)
}

// messageOf is the message WithMessage named, or "".
func messageOf(ctx context.Context) string {
	id, _ := ctx.Value(messageKey{}).(string)
	return id
}
