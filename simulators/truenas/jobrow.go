package truenas

import (
	"encoding/json"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// row is the job as core.get_jobs returns it (and job events carry it).
func (j *job) row() middleware.Row {
	j.mu.Lock()
	defer j.mu.Unlock()
	var args any = []any{}
	_ = json.Unmarshal(j.args, &args)
	r := middleware.Row{
		"id":                    j.id,
		"method":                j.method,
		"arguments":             args,
		"transient":             false,
		"description":           nil,
		"abortable":             true,
		"logs_path":             nil,
		"logs_excerpt":          nil,
		"progress":              map[string]any{"percent": j.percent, "description": j.description, "extra": nil},
		"result":                j.result,
		"result_encoding_error": nil,
		"error":                 nil,
		"exception":             nil,
		"exc_info":              nil,
		"state":                 j.state,
		"time_started":          dateOf(j.started),
		"time_finished":         nil,
		"credentials":           map[string]any{"type": j.cred, "data": map[string]any{"username": j.user}},
	}
	if !j.finished.IsZero() {
		r["time_finished"] = dateOf(j.finished)
	}
	if j.err != nil && j.state != jobSuccess {
		errStr, excType, errno, extra := jobFailure(j.err)
		r["error"] = errStr
		r["exception"] = "Traceback (most recent call last):\n" + excType + ": " + errStr + "\n"
		r["exc_info"] = map[string]any{"type": excType, "errno": errno, "extra": extra, "repr": excType + "(" + quote(errStr) + ")"}
	}
	return r
}

// jobFailure is how middlewared's job.py records an exception: error =
// str(exception), exc_info.type = the class ("VALIDATION" for validation
// errors, so clients raise ValidationErrors from exc_info.extra).
func jobFailure(err error) (errStr, excType string, errno int, extra any) {
	c := classify(err)
	switch c.kind {
	case kindCall, kindNoMethod:
		return callReason(c.call), "CallError", c.call.Errno, c.call.Extra
	case kindValidation:
		return validationReason(c.invalid), "VALIDATION", middleware.EINVAL, validationExtra(c.invalid)
	case kindNotFound:
		return notFoundReason(c.notFound), "VALIDATION", middleware.ENOENT, []any{[]any{nil, c.notFound.Message, middleware.ENOENT}}
	}
	return err.Error(), "Exception", middleware.EINVAL, nil
}

// dateOf is a datetime as middlewared's JSON encoder writes it.
func dateOf(t time.Time) map[string]any { return map[string]any{"$date": t.UnixMilli()} }

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
