package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The lab talks to the apiserver with plain HTTPS and JSON: the few calls
// it makes (readiness, nodes, leases) do not justify client-go in the
// driver's module.

// apiError is a non-2xx answer.
type apiError struct {
	Method, Path string
	Code         int
	Body         string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("apiserver %s %s: HTTP %d: %s", e.Method, e.Path, e.Code, e.Body)
}

// isNotFound and isConflict classify apiErrors.
func isNotFound(err error) bool { return apiCode(err) == http.StatusNotFound }
func isConflict(err error) bool { return apiCode(err) == http.StatusConflict }

func apiCode(err error) int {
	var e *apiError
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// httpClient authenticates as the admin.
func (c *Local) httpClient() (*http.Client, error) {
	if c.client != nil {
		return c.client, nil
	}
	admin, err := loadKeyPair(c.path("pki"), "admin")
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(admin.CertPEM, admin.KeyPEM)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(c.pki.ca.cert)
	c.client = &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		}},
	}
	return c.client, nil
}

// api sends body (JSON-encoded unless it is []byte) and decodes the answer
// into out when out is not nil. contentType defaults to application/json.
func (c *Local) api(ctx context.Context, method, path, contentType string, body, out any) error {
	hc, err := c.httpClient()
	if err != nil {
		return err
	}
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.APIServerURL()+path, rd)
	if err != nil {
		return err
	}
	if contentType == "" {
		contentType = "application/json"
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode/100 != 2 {
		if len(data) > 500 {
			data = data[:500]
		}
		return &apiError{Method: method, Path: path, Code: resp.StatusCode, Body: string(data)}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("apiserver %s %s: %w", method, path, err)
		}
	}
	return nil
}

// nodeStatus is the part of a Node the lab reads.
type nodeStatus struct {
	Status struct {
		Conditions []struct {
			Type, Status, Reason, Message string
			LastHeartbeatTime             time.Time `json:"lastHeartbeatTime"`
		} `json:"conditions"`
	} `json:"status"`
}

// NodeReady reports whether the node's Ready condition is True, and the
// condition's message otherwise. While Start runs, a condition last
// reported before the start does not count: on a warm start the Node
// object still says Ready from the previous run.
func (c *Local) NodeReady(ctx context.Context, name string) (bool, string, error) {
	var n nodeStatus
	if err := c.api(ctx, http.MethodGet, "/api/v1/nodes/"+name, "", nil, &n); err != nil {
		if isNotFound(err) {
			return false, "not registered yet", nil
		}
		return false, "", err
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == "Ready" {
			if cond.LastHeartbeatTime.Before(c.started.Truncate(time.Second)) {
				return false, "its Ready condition is from before this start", nil
			}
			return cond.Status == "True", cond.Reason + ": " + cond.Message, nil
		}
	}
	return false, "no Ready condition yet", nil
}

// WaitNodeReady polls until the node is Ready; the error says how far it got.
func (c *Local) WaitNodeReady(ctx context.Context, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		ok, why, err := c.NodeReady(ctx, name)
		if ok {
			return nil
		}
		if err != nil {
			last = err.Error()
		} else {
			last = why
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s not Ready after %s: %s", name, timeout, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
