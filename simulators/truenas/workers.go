package truenas

import "sync/atomic"

// callWorkers run the WebSocket calls. A call used to run in a goroutine
// of its own, whose stack then grew (and was copied, twice or more) to
// the depth of a dataset create: 5 % of the simulator's CPU per call in
// BenchmarkTrueNASCreateDelete (issue 16, sixth round). A worker keeps
// its grown stack and takes the next call. A call that finds no idle
// worker gets a new one while there are fewer than max, else a goroutine
// of its own, as before: calls never wait for a worker, so what runs at
// once and in what order is unchanged (the connection's own limits,
// rpcConn.slots and MaxConcurrentCalls, still decide).
type callWorkers struct {
	tasks chan func() // unbuffered: a send succeeds only to an idle worker
	stop  chan struct{}
	n     atomic.Int32
	max   int32
}

func newCallWorkers(limit int) *callWorkers {
	return &callWorkers{tasks: make(chan func()), stop: make(chan struct{}), max: int32(limit)}
}

// run starts f on an idle worker, a new worker or a goroutine.
func (w *callWorkers) run(f func()) {
	select {
	case w.tasks <- f:
		return
	default:
	}
	if w.n.Add(1) <= w.max {
		go w.loop(f)
		return
	}
	w.n.Add(-1)
	go f()
}

func (w *callWorkers) loop(f func()) {
	defer w.n.Add(-1)
	for {
		f()
		select {
		case f = <-w.tasks:
		case <-w.stop:
			return
		}
	}
}

// close ends the idle workers; a busy one ends after its call. Only once.
func (w *callWorkers) close() { close(w.stop) }
