package api

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestCallJob runs a job method over each transport and version: before
// 25.10 (and over REST) the client gets a job id and polls core.get_jobs;
// from 25.10 the WebSocket answers with the result directly.
func TestCallJob(t *testing.T) {
	tests := []struct {
		version, transport string
		wantPolls          bool
	}{
		{"25.04", TransportWebSocket, true},
		{"25.10", TransportWebSocket, false},
		{"26.04", TransportWebSocket, false},
		{"24.10", TransportREST, true},
		{"25.10", TransportREST, true},
	}
	for _, tt := range tests {
		t.Run(tt.version+"/"+tt.transport, func(t *testing.T) {
			f := newFakeNAS(t, tt.version)
			var runs atomic.Int64
			f.handleJob("filesystem.setperm", func(ctx context.Context, p []json.RawMessage) (any, error) {
				runs.Add(1)
				time.Sleep(30 * time.Millisecond)
				var arg map[string]any
				_ = json.Unmarshal(p[0], &arg)
				return map[string]any{"path": arg["path"], "done": true}, nil
			})
			f.start()
			cfg := f.config()
			cfg.Transport = tt.transport
			c := newClient(t, cfg)
			res, err := c.CallJob(ctxT(t), "filesystem.setperm", map[string]any{"path": "/mnt/tank/v", "mode": "777"})
			if err != nil {
				t.Fatalf("CallJob: %v", err)
			}
			var got map[string]any
			if err := json.Unmarshal(res, &got); err != nil || got["path"] != "/mnt/tank/v" || got["done"] != true {
				t.Fatalf("result %s", res)
			}
			if runs.Load() != 1 {
				t.Fatalf("job ran %d times", runs.Load())
			}
			polls := c.Stats().JobPolls
			if tt.wantPolls && polls == 0 || !tt.wantPolls && polls != 0 {
				t.Fatalf("JobPolls = %d, want polling: %v", polls, tt.wantPolls)
			}
			if tt.transport == TransportREST {
				var sawPoll bool
				for _, r := range f.restRequests() {
					if r.Verb == "GET" && r.Path == "/api/v2.0/core/get_jobs" && r.Query == "id=1" {
						sawPoll = true
					}
				}
				if !sawPoll {
					t.Fatalf("no GET /api/v2.0/core/get_jobs?id=1 in %+v", f.restRequests())
				}
			}
		})
	}
}

func TestCallJobFailure(t *testing.T) {
	tests := []struct {
		version, transport string
		err                error
		want               string
		validation         bool
	}{
		{"25.04", TransportWebSocket, fakeCallError{errno: 2, msg: "Path /mnt/x not found"}, "filesystem.setperm: [ENOENT] Path /mnt/x not found", false},
		{"25.10", TransportWebSocket, fakeCallError{errno: 2, msg: "Path /mnt/x not found"}, "filesystem.setperm: [ENOENT] Path /mnt/x not found", false},
		{"24.10", TransportREST, fakeCallError{errno: 2, msg: "Path /mnt/x not found"}, "filesystem.setperm: [ENOENT] Path /mnt/x not found", false},
		{"25.04", TransportWebSocket, fakeValidation{{"filesystem.setperm.mode", "Invalid mode", 22}}, "filesystem.setperm: filesystem.setperm.mode: Invalid mode", true},
		{"25.10", TransportWebSocket, fakeValidation{{"filesystem.setperm.mode", "Invalid mode", 22}}, "filesystem.setperm: filesystem.setperm.mode: Invalid mode", true},
	}
	for _, tt := range tests {
		t.Run(tt.version+"/"+tt.transport, func(t *testing.T) {
			f := newFakeNAS(t, tt.version)
			f.handleJob("filesystem.setperm", func(context.Context, []json.RawMessage) (any, error) { return nil, tt.err })
			f.start()
			cfg := f.config()
			cfg.Transport = tt.transport
			c := newClient(t, cfg)
			_, err := c.CallJob(ctxT(t), "filesystem.setperm", map[string]any{"path": "/mnt/x"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if IsValidation(err) != tt.validation {
				t.Fatalf("IsValidation = %v for %v", IsValidation(err), err)
			}
			if !tt.validation && !IsNotFound(err) {
				t.Fatalf("the job's ENOENT was lost: %#v", err)
			}
		})
	}
}

func TestCallJobWaitBoundedByContext(t *testing.T) {
	f := newFakeNAS(t, "25.04")
	release := make(chan struct{})
	defer close(release)
	f.handleJob("replication.run_onetime", func(context.Context, []json.RawMessage) (any, error) {
		<-release
		return nil, nil
	})
	f.start()
	c := newClient(t, f.config())
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.CallJob(ctx, "replication.run_onetime", map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "waiting for job 1") || !strings.Contains(err.Error(), "may have taken effect") {
		t.Fatalf("error %v", err)
	}
}
