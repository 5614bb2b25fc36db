package events

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Options configure a Recorder. InClusterOptions fills the connection part.
type Options struct {
	APIServer string                 // https://host:port
	Client    *http.Client           // trusts the API server's CA
	Token     func() (string, error) // the bearer token, read per call
	Pod       Pod                    // the object the Events regard

	// Controller is the Events' reportingController (default "switchyard";
	// cmd/switchyard gives the CSI driver name).
	Controller string
	// Interval is the least time between two API calls about the same
	// problem; repeats in between only grow its count (default 1 min).
	Interval time.Duration
	// Burst and Refill are the token bucket of all API calls together:
	// Burst calls at once, then one per Refill (default 10, 10 s).
	Burst  int
	Refill time.Duration
	// Forget is how long a problem is remembered after it was last seen;
	// later it makes a new Event (default 1 h, the API server's usual
	// event TTL).
	Forget time.Duration
	// Queue is how many problems may wait to be posted; more are dropped
	// (default 64).
	Queue int
	Log   *slog.Logger
}

func (o *Options) defaults() {
	if o.Controller == "" {
		o.Controller = "switchyard"
	}
	if o.Interval <= 0 {
		o.Interval = time.Minute
	}
	if o.Burst <= 0 {
		o.Burst = 10
	}
	if o.Refill <= 0 {
		o.Refill = 10 * time.Second
	}
	if o.Forget <= 0 {
		o.Forget = time.Hour
	}
	if o.Queue <= 0 {
		o.Queue = 64
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
}

// item is one occurrence of a problem, queued for the worker.
type item struct {
	key                       string
	typ, reason, action, note string
	at                        time.Time
}

// entry is a problem already posted as the Event name.
type entry struct {
	item
	name               string
	count              int32
	lastSent, lastSeen time.Time
	pending            bool // seen again since the last API call
}

// Recorder posts Events from one goroutine. Its methods are safe for
// concurrent use and never block on the API server.
type Recorder struct {
	o   Options
	api apiClient
	ch  chan item

	mu     sync.Mutex
	broken map[string]string // connection -> broken file (observer.go)
	closed bool              // ch is closed: Event drops

	// worker state (only the worker goroutine touches these)
	seen   map[string]*entry
	tokens float64
	filled time.Time

	stopOnce sync.Once
	done     chan struct{}
}

// New starts a Recorder; Close stops it.
func New(o Options) *Recorder {
	o.defaults()
	r := &Recorder{
		o: o, api: apiClient{o: o}, ch: make(chan item, o.Queue),
		broken: map[string]string{}, seen: map[string]*entry{},
		tokens: float64(o.Burst), filled: time.Now(), done: make(chan struct{}),
	}
	go r.run()
	return r
}

// Close posts what is pending (for at most timeout) and stops.
func (r *Recorder) Close(timeout time.Duration) {
	r.stopOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		close(r.ch)
		r.mu.Unlock()
	})
	select {
	case <-r.done:
	case <-time.After(timeout):
		r.o.Log.Warn("events: stopped before every pending event was posted")
	}
}

// Event queues one occurrence of the problem key. Occurrences with the
// same key are one Event with a count.
func (r *Recorder) Event(key, typ, reason, action, note string) {
	it := item{key: key, typ: typ, reason: reason, action: action, note: truncate(note, maxNote), at: time.Now()}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return // a late observer call while stopping
	}
	select {
	case r.ch <- it:
	default:
		r.o.Log.Debug("events: queue full, event dropped", "reason", reason)
	}
}

func (r *Recorder) run() {
	defer close(r.done)
	tick := time.NewTicker(r.o.Interval / 2)
	defer tick.Stop()
	for {
		select {
		case it, ok := <-r.ch:
			if !ok {
				r.flushAll(true)
				return
			}
			r.handle(it)
		case <-tick.C:
			r.flushAll(false)
		}
	}
}

// take spends one API call from the bucket, if there is one.
func (r *Recorder) take() bool {
	now := time.Now()
	r.tokens += now.Sub(r.filled).Seconds() / r.o.Refill.Seconds()
	r.filled = now
	r.tokens = min(r.tokens, float64(r.o.Burst))
	if r.tokens < 1 {
		return false
	}
	r.tokens--
	return true
}

func (r *Recorder) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 15*time.Second)
}

func (r *Recorder) handle(it item) {
	e := r.seen[it.key]
	if e != nil && it.at.Sub(e.lastSeen) > r.o.Forget {
		delete(r.seen, it.key)
		e = nil
	}
	if e == nil {
		if !r.take() {
			r.o.Log.Warn("events: rate limit reached, event not posted", "reason", it.reason, "note", it.note)
			return
		}
		e = &entry{item: it, count: 1, lastSeen: it.at}
		if err := r.post(e); err != nil {
			r.o.Log.Warn("events: posting an event failed", "reason", it.reason, "error", err)
			return
		}
		r.seen[it.key] = e
		return
	}
	e.count++
	e.lastSeen = it.at
	e.pending = true
	if time.Since(e.lastSent) >= r.o.Interval {
		r.flush(e)
	}
}

// post creates e's Event under a new name.
func (r *Recorder) post(e *entry) error {
	ev := &event{APIVersion: "events.k8s.io/v1", Kind: "Event",
		EventTime:           e.at.UTC().Format(microTime),
		ReportingController: r.o.Controller, ReportingInstance: truncate(r.o.Pod.Name, 128),
		Action: e.action, Reason: e.reason, Note: e.note, Type: e.typ,
		Regarding: objectRef{APIVersion: "v1", Kind: "Pod", Name: r.o.Pod.Name, Namespace: r.o.Pod.Namespace, UID: r.o.Pod.UID},
	}
	if e.count > 1 {
		// A new Event for a problem whose old one expired: keep its count.
		ev.Series = &series{Count: e.count, LastObservedTime: e.lastSeen.UTC().Format(microTime)}
	}
	ev.Metadata.Name, ev.Metadata.Namespace = eventName(r.o.Pod.Name), r.o.Pod.Namespace
	ctx, cancel := r.ctx()
	defer cancel()
	if err := r.api.create(ctx, ev); err != nil {
		return err
	}
	e.name, e.lastSent, e.pending = ev.Metadata.Name, time.Now(), false
	return nil
}

// flush patches e's series with its count, when a token allows.
func (r *Recorder) flush(e *entry) {
	if !r.take() {
		return // stays pending; the ticker tries again
	}
	ctx, cancel := r.ctx()
	defer cancel()
	err := r.api.patchSeries(ctx, e.name, e.count, e.lastSeen)
	if errors.Is(err, errNotFound) {
		err = r.post(e)
	}
	if err != nil {
		r.o.Log.Warn("events: updating an event failed", "reason", e.reason, "error", err)
		return
	}
	e.lastSent, e.pending = time.Now(), false
}

// flushAll patches every pending problem whose interval is over (all of
// them when final) and forgets old ones.
func (r *Recorder) flushAll(final bool) {
	for k, e := range r.seen {
		if e.pending && (final || time.Since(e.lastSent) >= r.o.Interval) {
			r.flush(e)
		}
		if !e.pending && time.Since(e.lastSeen) > r.o.Forget {
			delete(r.seen, k)
		}
	}
}
