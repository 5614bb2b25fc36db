package truenas

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// Job states, as core.get_jobs reports them.
const (
	jobWaiting = "WAITING"
	jobRunning = "RUNNING"
	jobSuccess = "SUCCESS"
	jobFailed  = "FAILED"
	jobAborted = "ABORTED"
)

// maxJobs is how many jobs core.get_jobs remembers (finished ones are
// forgotten oldest first).
const maxJobs = 1000

// jobManager runs the methods flagged Method.Job, numbering them from 1.
// Jobs live in memory only: a restart forgets them, as middlewared does.
type jobManager struct {
	srv *Server

	mu    sync.Mutex
	epoch int // bumped by reset; a job of an older epoch no longer reports events
	next  int
	jobs  map[int]*job
	order []int
}

// job is one running or finished job.
type job struct {
	mgr    *jobManager
	epoch  int
	id     int
	method string
	args   json.RawMessage
	user   string
	cred   string // how the caller authenticated
	cancel context.CancelFunc
	done   chan struct{}

	mu          sync.Mutex
	state       string
	percent     float64
	description string
	result      any
	err         error
	started     time.Time
	finished    time.Time
}

func newJobManager(s *Server) *jobManager {
	return &jobManager{srv: s, jobs: map[int]*job{}}
}

// submit starts a job for m. ctx carries the caller's session; the job
// outlives the caller's connection but not a Restart of the server.
func (jm *jobManager) submit(ctx context.Context, m *middleware.Method, params []json.RawMessage, user, cred string) *job {
	args, err := json.Marshal(params)
	if err != nil || params == nil {
		args = json.RawMessage("[]")
	}
	jctx, cancel := context.WithCancel(ctx)
	jm.mu.Lock()
	jm.next++
	j := &job{mgr: jm, epoch: jm.epoch, id: jm.next, method: m.Name, args: args, user: user, cred: cred, cancel: cancel,
		done: make(chan struct{}), state: jobRunning, started: time.Now()}
	jm.jobs[j.id] = j
	jm.order = append(jm.order, j.id)
	jm.trimLocked()
	jm.mu.Unlock()
	jm.event("added", j)

	c := &middleware.Call{Ctx: jctx, Version: jm.srv.version, User: user, Progress: j.progress}
	if !jm.srv.begin() {
		cancel()
		j.finish(nil, &middleware.CallError{Errno: middleware.EFAULT, Message: "server closed"})
		return j
	}
	go func() {
		defer jm.srv.end()
		defer cancel()
		res, err := runHandler(m.Handler, c, params)
		j.finish(res, err)
	}()
	return j
}

// trimLocked forgets the oldest finished jobs beyond maxJobs.
func (jm *jobManager) trimLocked() {
	for i := 0; len(jm.jobs) > maxJobs && i < len(jm.order); {
		j := jm.jobs[jm.order[i]]
		if j != nil && !j.isFinished() {
			i++
			continue
		}
		delete(jm.jobs, jm.order[i])
		jm.order = append(jm.order[:i], jm.order[i+1:]...)
	}
}

func (jm *jobManager) get(id int) *job {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	return jm.jobs[id]
}

// rows are the jobs as core.get_jobs returns them, oldest first.
func (jm *jobManager) rows() []middleware.Row {
	jm.mu.Lock()
	js := make([]*job, 0, len(jm.order))
	for _, id := range jm.order {
		js = append(js, jm.jobs[id])
	}
	jm.mu.Unlock()
	out := make([]middleware.Row, len(js))
	for i, j := range js {
		out[i] = j.row()
	}
	return out
}

// reset aborts every running job and forgets them all; ids start at 1
// again, as after a middlewared restart.
func (jm *jobManager) reset() {
	jm.mu.Lock()
	js := jm.jobs
	jm.epoch++
	jm.next = 0
	jm.jobs = map[int]*job{}
	jm.order = nil
	jm.mu.Unlock()
	for _, j := range js {
		j.cancel()
	}
}

// event tells subscribed sessions about a job (core.get_jobs events).
func (jm *jobManager) event(msg string, j *job) {
	jm.mu.Lock()
	current := j.epoch == jm.epoch
	jm.mu.Unlock()
	if current {
		jm.srv.jobEvent(msg, j.id, j.row())
	}
}

func (j *job) progress(percent float64, description string) {
	j.mu.Lock()
	if j.state != jobRunning {
		j.mu.Unlock()
		return
	}
	j.percent, j.description = percent, description
	j.mu.Unlock()
	j.mgr.event("changed", j)
}

func (j *job) finish(res any, err error) {
	j.mu.Lock()
	if j.state == jobRunning {
		switch {
		case err != nil:
			j.state, j.err = jobFailed, err
		default:
			j.state, j.result, j.percent = jobSuccess, res, 100
		}
	}
	j.finished = time.Now()
	j.mu.Unlock()
	close(j.done)
	j.mgr.event("changed", j)
}

// abort marks a running job ABORTED and cancels its context.
func (j *job) abort() {
	j.mu.Lock()
	if j.state == jobRunning || j.state == jobWaiting {
		j.state = jobAborted
		j.err = &middleware.CallError{Errno: errnoEINTR, Message: "Job aborted"}
	}
	j.mu.Unlock()
	j.cancel()
}

func (j *job) isFinished() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// wait blocks until the job ends and returns its result or error.
func (j *job) wait(ctx context.Context) (any, error) {
	select {
	case <-j.done:
	case <-ctx.Done():
		return nil, &middleware.CallError{Errno: middleware.EFAULT, Message: "server restarted while waiting for job " + strconv.Itoa(j.id)}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.state == jobSuccess {
		return j.result, nil
	}
	if j.err == nil {
		return nil, errors.New("job " + strconv.Itoa(j.id) + " ended in state " + j.state)
	}
	return nil, j.err
}
