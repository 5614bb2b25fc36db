package framework

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Condition reports whether what a wait waits for has happened, and a
// short status for the timeout message. An error ends the wait at once:
// return it only when waiting longer cannot help.
type Condition func(ctx context.Context) (done bool, status string, err error)

// PollInterval is how often waits look.
var PollInterval = time.Second

// Wait polls cond until it is done, fails or timeout (scaled by
// E2E_TIMEOUT_SCALE) passes. The timeout error says what was awaited,
// for how long, and the last status seen, so a failed spec reads like a
// bug report rather than "timed out".
func (f *F) Wait(ctx context.Context, what string, timeout time.Duration, cond Condition) error {
	return wait(ctx, what, f.Config.Scale(timeout), cond)
}

func wait(ctx context.Context, what string, timeout time.Duration, cond Condition) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	status := "not looked yet"
	for {
		done, st, err := cond(ctx)
		if st != "" {
			status = st
		}
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("timed out after %s waiting for %s; last seen: %s", time.Since(start).Round(time.Second), what, status)
			}
			return fmt.Errorf("waiting for %s: %w (last seen: %s)", what, ctx.Err(), status)
		case <-time.After(PollInterval):
		}
	}
}

// Retry is a Condition's answer to an error that waiting may cure (the
// API server is busy, the object is not there yet): not done, the error
// as the status to report if the wait times out.
func Retry(err error) (bool, string, error) { return false, err.Error(), nil }
