package events

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// microTime is the format of events.k8s.io's MicroTime fields.
const microTime = "2006-01-02T15:04:05.000000Z07:00"

// objectRef is core/v1 ObjectReference, the fields an Event's regarding uses.
type objectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
	UID        string `json:"uid,omitempty"`
}

// series is events.k8s.io/v1 EventSeries.
type series struct {
	Count            int32  `json:"count"`
	LastObservedTime string `json:"lastObservedTime"`
}

// event is events.k8s.io/v1 Event, the fields this package sets.
type event struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	EventTime           string    `json:"eventTime"`
	Series              *series   `json:"series,omitempty"`
	ReportingController string    `json:"reportingController"`
	ReportingInstance   string    `json:"reportingInstance"`
	Action              string    `json:"action"`
	Reason              string    `json:"reason"`
	Regarding           objectRef `json:"regarding"`
	Note                string    `json:"note"`
	Type                string    `json:"type"`
}

// maxNote is the API server's limit on an Event's note (1 kB).
const maxNote = 1024

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// eventName is "<pod>.<16 hex digits>", as Kubernetes' own recorders name
// Events: unique, and found by the pod's name.
func eventName(pod string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return truncate(pod, 200) + "." + hex.EncodeToString(b)
}

// apiClient makes the two calls.
type apiClient struct {
	o Options
}

func (c apiClient) path(name string) string {
	p := "/apis/events.k8s.io/v1/namespaces/" + url.PathEscape(c.o.Pod.Namespace) + "/events"
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return c.o.APIServer + p
}

// create posts ev.
func (c apiClient) create(ctx context.Context, ev *event) error {
	body, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, c.path(""), "application/json", body)
}

// patchSeries sets the series of the Event name: the problem happened
// count times, the last at last.
func (c apiClient) patchSeries(ctx context.Context, name string, count int32, last time.Time) error {
	body, err := json.Marshal(map[string]any{"series": series{Count: count, LastObservedTime: last.UTC().Format(microTime)}})
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPatch, c.path(name), "application/merge-patch+json", body)
}

// errNotFound: the Event is gone (expired, deleted); make a new one.
var errNotFound = fmt.Errorf("event not found")

func (c apiClient) do(ctx context.Context, method, u, ctype string, body []byte) error {
	tok, err := c.o.Token()
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Accept", "application/json")
	if tok != "" { // an empty token: the client authenticates otherwise (a client certificate)
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.o.Client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	switch {
	case resp.StatusCode/100 == 2:
		return nil
	case resp.StatusCode == http.StatusNotFound && method == http.MethodPatch:
		return errNotFound
	case resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%s events in namespace %s: forbidden: the service account needs create and patch on events.k8s.io events (the chart's RBAC grants them): %s",
			method, c.o.Pod.Namespace, apiMessage(msg))
	default:
		return fmt.Errorf("%s %s: HTTP %d: %s", method, u, resp.StatusCode, apiMessage(msg))
	}
}

// apiMessage is the message of a metav1.Status answer, else the raw text.
func apiMessage(b []byte) string {
	var st struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &st) == nil && st.Message != "" {
		return st.Message
	}
	return truncate(strings.TrimSpace(string(b)), 300)
}
