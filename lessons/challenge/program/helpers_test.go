package program

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Every goroutine a Process starts ends with it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
