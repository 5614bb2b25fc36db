package truenas

import "context"

// generation is one "boot" of the simulated middleware: Restart ends it
// (cancelling every in-flight call and job) and starts the next one.
type generation struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func newGeneration() *generation {
	ctx, cancel := context.WithCancel(context.Background())
	return &generation{ctx: ctx, cancel: cancel}
}
