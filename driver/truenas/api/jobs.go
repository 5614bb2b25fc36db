package api

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// Job polling backoff: quick for the many jobs that finish at once, slower
// for long ones.
const (
	jobPollMin = 10 * time.Millisecond
	jobPollMax = 500 * time.Millisecond
)

// jobEntry is what core.get_jobs lists per job.
type jobEntry struct {
	ID      int64           `json:"id"`
	Method  string          `json:"method"`
	State   string          `json:"state"` // WAITING, RUNNING, SUCCESS, FAILED, ABORTED
	Result  json.RawMessage `json:"result"`
	Error   *string         `json:"error"`
	ExcInfo *struct {
		Type  string          `json:"type"` // "VALIDATION" for ValidationErrors
		Errno *int            `json:"errno"`
		Extra json.RawMessage `json:"extra"`
	} `json:"exc_info"`
}

// jobID reads a job method's legacy answer: the job id.
func jobID(raw json.RawMessage) (int64, bool) {
	id, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	return id, err == nil
}

// waitForJob polls core.get_jobs (through t, so over either transport)
// until the job ends, and returns its result. started is what the job
// method answered: a job id, or (for a method that turned out not to be a
// job) its result, returned as is.
func (c *Client) waitForJob(ctx context.Context, t transport, method string, started json.RawMessage) (json.RawMessage, error) {
	id, ok := jobID(started)
	if !ok {
		return started, nil
	}
	filter := []any{[]any{[]any{"id", "=", id}}}
	delay := jobPollMin
	for {
		c.stats.jobPolls.Add(1)
		pctx, cancel := context.WithTimeout(ctx, c.st.cfg.Timeout)
		raw, err := t.call(pctx, "core.get_jobs", filter)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, c.cancelled(method, "waiting for job "+strconv.FormatInt(id, 10), true, ctx.Err())
			}
			return nil, err
		}
		var jobs []jobEntry
		if err := json.Unmarshal(raw, &jobs); err != nil {
			return nil, c.fail(nil, "%s: core.get_jobs answered %.100s, not a job list", method, string(raw))
		}
		if len(jobs) == 0 {
			return nil, c.fail(nil, "%s: job %d is no longer listed by core.get_jobs", method, id)
		}
		j := jobs[0]
		switch j.State {
		case "SUCCESS":
			if len(j.Result) == 0 {
				return json.RawMessage("null"), nil
			}
			return j.Result, nil
		case "FAILED", "ABORTED":
			return nil, c.serverError(jobError(method, j))
		}
		if err := sleepCtx(ctx, delay); err != nil {
			return nil, c.cancelled(method, "waiting for job "+strconv.FormatInt(id, 10), true, err)
		}
		delay = min(2*delay, jobPollMax)
	}
}

// jobError turns a failed or aborted job into an *Error carrying the job's
// own message and, for validation failures, its fields.
func jobError(method string, j jobEntry) *Error {
	e := &Error{Method: method}
	if j.Error != nil {
		e.Errname, e.Message = splitErrnamePrefix(*j.Error)
	}
	if j.State == "ABORTED" {
		prefix := "job " + strconv.FormatInt(j.ID, 10) + " was aborted"
		if e.Message != "" {
			prefix += ": "
		}
		e.Message = prefix + e.Message
	} else if e.Message == "" {
		e.Message = "job " + strconv.FormatInt(j.ID, 10) + " failed without a message"
	}
	if x := j.ExcInfo; x != nil {
		if x.Errno != nil {
			e.Errno = *x.Errno
		}
		if x.Type == "VALIDATION" {
			e.Fields = parseExtraFields(x.Extra)
		}
	}
	if e.Errname == "" {
		e.Errname = errnoNames[e.Errno]
	}
	return e
}
