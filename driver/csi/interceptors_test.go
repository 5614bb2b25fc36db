package csi

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// testController misbehaves on purpose, one way per method.
type testController struct {
	csipb.UnimplementedControllerServer
	deletes atomic.Int32
	slow    chan struct{}
}

func (c *testController) CreateVolume(ctx context.Context, req *csipb.CreateVolumeRequest) (*csipb.CreateVolumeResponse, error) {
	switch req.GetName() {
	case "panic":
		var m map[string]int
		m["boom"]++ //nolint:staticcheck // SA5000: a nil map write, a real panic on purpose
	case "plain-error":
		return nil, errors.New("disk on fire")
	case "slow":
		<-c.slow
	}
	if strings.HasPrefix(req.GetName(), "echo-") {
		// A backend that quotes its whole input back.
		return nil, status.Errorf(codes.InvalidArgument, "name %q is not usable", req.GetName())
	}
	return &csipb.CreateVolumeResponse{Volume: &csipb.Volume{VolumeId: req.GetName()}}, nil
}

func (c *testController) DeleteVolume(ctx context.Context, req *csipb.DeleteVolumeRequest) (*csipb.DeleteVolumeResponse, error) {
	c.deletes.Add(1)
	return &csipb.DeleteVolumeResponse{}, nil
}

// ValidateVolumeCapabilities knows one volume, "ok".
func (c *testController) ValidateVolumeCapabilities(ctx context.Context, req *csipb.ValidateVolumeCapabilitiesRequest) (*csipb.ValidateVolumeCapabilitiesResponse, error) {
	if req.GetVolumeId() != "ok" {
		return nil, status.Error(codes.NotFound, "no such volume")
	}
	return &csipb.ValidateVolumeCapabilitiesResponse{}, nil
}

func startServer(t *testing.T, ctl csipb.ControllerServer, log *slog.Logger) (*Server, csipb.ControllerClient) {
	t.Helper()
	srv := NewServer(Options{Identity: &Identity{Name: "t"}, Controller: ctl, Logger: log})
	l, err := Listen("unix://" + filepath.Join(t.TempDir(), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Stop(context.Background()) })
	cc, err := grpc.NewClient("unix://"+l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return srv, csipb.NewControllerClient(cc)
}

func TestInterceptors(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	_, c := startServer(t, &testController{}, log)
	ctx := context.Background()

	_, err := c.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "panic"})
	if st := status.Convert(err); st.Code() != codes.Internal || !strings.Contains(st.Message(), "panic") {
		t.Fatalf("panic became %v %q; want INTERNAL naming the panic", st.Code(), st.Message())
	}
	_, err = c.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "plain-error"})
	if st := status.Convert(err); st.Code() != codes.Internal || st.Message() != "disk on fire" {
		t.Fatalf("plain error became %v %q", st.Code(), st.Message())
	}
	// The server still serves after a panic.
	if _, err := c.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "ok", Secrets: map[string]string{"password": "hunter2"}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "hunter2") {
		t.Fatalf("a secret reached the log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "method=CreateVolume") {
		t.Fatalf("calls are not logged:\n%s", logs.String())
	}
}

func TestCallsOnOneVolumeAreSerialised(t *testing.T) {
	ctl := &testController{slow: make(chan struct{})}
	_, c := startServer(t, ctl, slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
	done := make(chan error)
	go func() {
		_, err := c.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: "slow"})
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	// Another name proceeds at once; the same name waits and then gives up.
	if _, err := c.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: "other"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "slow"})
	if code := status.Code(err); code != codes.Aborted && code != codes.DeadlineExceeded {
		t.Fatalf("second call on a busy name: %v; want ABORTED or DEADLINE_EXCEEDED", err)
	}
	close(ctl.slow)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// testNode stages volume "slow" only once release is closed, and records
// how many calls run on each volume at once.
type testNode struct {
	csipb.UnimplementedNodeServer
	release chan struct{}
	mu      sync.Mutex
	running map[string]int
	most    map[string]int
}

func (n *testNode) NodeStageVolume(ctx context.Context, req *csipb.NodeStageVolumeRequest) (*csipb.NodeStageVolumeResponse, error) {
	id := req.GetVolumeId()
	n.mu.Lock()
	n.running[id]++
	n.most[id] = max(n.most[id], n.running[id])
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		n.running[id]--
		n.mu.Unlock()
	}()
	if id == "slow" {
		<-n.release
	}
	return &csipb.NodeStageVolumeResponse{}, nil
}

// Node calls are locked by the server alone (the node service holds no
// per-volume lock of its own): one volume's calls run one at a time, other
// volumes' calls at once, and a waiter whose context ends gets ABORTED.
func TestNodeCallsOnOneVolumeAreSerialised(t *testing.T) {
	n := &testNode{release: make(chan struct{}), running: map[string]int{}, most: map[string]int{}}
	srv := NewServer(Options{Identity: &Identity{Name: "t"}, Node: n, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
	l, err := Listen("unix://" + filepath.Join(t.TempDir(), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Stop(context.Background()) })
	cc, err := grpc.NewClient("unix://"+l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	c := csipb.NewNodeClient(cc)
	stage := func(ctx context.Context, id string) error {
		_, err := c.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: id})
		return err
	}

	first, second := make(chan error, 1), make(chan error, 1)
	go func() { first <- stage(context.Background(), "slow") }()
	time.Sleep(50 * time.Millisecond)
	go func() { second <- stage(context.Background(), "slow") }()

	// Another volume proceeds while "slow" is held.
	if err := stage(context.Background(), "other"); err != nil {
		t.Fatalf("a call on another volume: %v", err)
	}
	// A caller that gives up waiting gets ABORTED (or its own deadline).
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if code := status.Code(stage(ctx, "slow")); code != codes.Aborted && code != codes.DeadlineExceeded {
		t.Fatalf("a call on a busy volume: %v; want ABORTED or DEADLINE_EXCEEDED", code)
	}
	select {
	case err := <-second:
		t.Fatalf("the second call on the volume ran while the first held it (err=%v)", err)
	default:
	}
	close(n.release)
	for _, ch := range []chan error{first, second} {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a waiting call never ran")
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.most["slow"] != 1 {
		t.Fatalf("%d calls ran on one volume at once; want 1", n.most["slow"])
	}
	if srv.locks.Len() != 0 {
		t.Fatalf("%d lock entries leak", srv.locks.Len())
	}
}

func TestStopWaitsForInFlightCalls(t *testing.T) {
	ctl := &testController{slow: make(chan struct{})}
	srv, c := startServer(t, ctl, slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
	done := make(chan error)
	go func() {
		_, err := c.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: "slow"})
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	stopped := make(chan struct{})
	go func() { srv.Stop(context.Background()); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("Stop returned while a call was in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(ctl.slow)
	if err := <-done; err != nil {
		t.Fatalf("in-flight call failed: %v", err)
	}
	<-stopped
}

func TestListen(t *testing.T) {
	dir := t.TempDir()
	for _, ep := range []string{"unix://" + filepath.Join(dir, "a.sock"), "unix:" + filepath.Join(dir, "b.sock"), filepath.Join(dir, "c.sock"), "tcp://127.0.0.1:0"} {
		l, err := Listen(ep)
		if err != nil {
			t.Fatalf("Listen(%q): %v", ep, err)
		}
		l.Close()
	}
	// A stale socket file is replaced.
	stale := filepath.Join(dir, "stale.sock")
	l, _ := net.Listen("unix", stale)
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if l, err := Listen(stale); err != nil {
		t.Fatalf("stale socket: %v", err)
	} else {
		l.Close()
	}
	if _, err := Listen("tcp://"); err == nil {
		t.Fatal("empty address accepted")
	}
}

func TestLockKeys(t *testing.T) {
	tests := []struct {
		req  any
		want string
	}{
		{&csipb.CreateVolumeRequest{Name: "n", VolumeContentSource: &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Snapshot{Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: "s1"}}}}, "volname:n,snap:s1"},
		{&csipb.CreateSnapshotRequest{Name: "s", SourceVolumeId: "v"}, "snapname:s,vol:v"},
		{&csipb.DeleteSnapshotRequest{SnapshotId: "s"}, "snap:s"},
		{&csipb.NodePublishVolumeRequest{VolumeId: "v"}, "vol:v"},
		{&csipb.ListVolumesRequest{}, ""},
		{&csipb.ProbeRequest{}, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(lockKeys(tt.req), ","); got != tt.want {
			t.Errorf("lockKeys(%T) = %q; want %q", tt.req, got, tt.want)
		}
	}
}

// No answer repeats kilobytes of a request, whatever a backend quoted.
func TestLongMessagesAreCut(t *testing.T) {
	_, c := startServer(t, &testController{}, slog.New(slog.DiscardHandler))
	long := "echo-" + strings.Repeat("x", 10_000)
	_, err := c.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: long})
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument {
		t.Fatalf("code %v; the cut must keep the backend's code", st.Code())
	}
	if n := len(st.Message()); n > 2200 || !strings.HasPrefix(st.Message(), `name "echo-xxx`) || !strings.Contains(st.Message(), "message cut") {
		t.Fatalf("message of %d bytes: %.120s…", n, st.Message())
	}
}

// The controller's reads of one volume hold no lock: they never wait for
// (nor make wait) calls on the same volume.
func TestVolumeReadsTakeNoLock(t *testing.T) {
	for _, req := range []any{
		&csipb.ValidateVolumeCapabilitiesRequest{VolumeId: "v"},
		&csipb.ControllerGetVolumeRequest{VolumeId: "v"},
	} {
		if k := lockKeys(req); len(k) != 0 {
			t.Errorf("%T: keys %v, want none", req, k)
		}
	}
	if k := lockKeys(&csipb.DeleteVolumeRequest{VolumeId: "v"}); len(k) != 1 {
		t.Errorf("DeleteVolume: keys %v, want vol:v", k)
	}
}

// A read that succeeds leaves no info line (the info log records what
// changed); a change does, and so does a read that fails.
func TestReadsAreQuietAtInfo(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	_, c := startServer(t, &testController{}, log)
	ctx := context.Background()
	if _, err := c.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "v"}); err != nil {
		t.Fatal(err)
	}
	_, _ = c.ValidateVolumeCapabilities(ctx, &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: "missing"})
	if _, err := c.ValidateVolumeCapabilities(ctx, &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: "ok"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	if !strings.Contains(out, "method=CreateVolume") {
		t.Errorf("no info line for CreateVolume:\n%s", out)
	}
	if !strings.Contains(out, `msg="call failed" method=ValidateVolumeCapabilities`) || strings.Count(out, "ValidateVolumeCapabilities") != 1 {
		t.Errorf("want one line for ValidateVolumeCapabilities, the failed one:\n%s", out)
	}
	if quiet("CreateVolume") || quiet("DeleteVolume") || !quiet("ValidateVolumeCapabilities") || !quiet("ControllerGetVolume") {
		t.Error("quiet must cover the reads and only them")
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A successful call's info line reads as log.Info writes it (logDone only
// skips the source position, which the driver's handler never prints),
// and is not written below the logger's level.
func TestLogDoneAsInfo(t *testing.T) {
	var got, want bytes.Buffer
	noTime := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	logDone(slog.New(slog.NewTextHandler(&got, noTime)), "CreateVolume", 1500*time.Microsecond)
	slog.New(slog.NewTextHandler(&want, noTime)).Info("call done", "method", "CreateVolume", "took", 1500*time.Microsecond)
	if got.String() != want.String() || got.Len() == 0 {
		t.Fatalf("logDone wrote %q; log.Info writes %q", got.String(), want.String())
	}
	var quiet bytes.Buffer
	logDone(slog.New(slog.NewTextHandler(&quiet, &slog.HandlerOptions{Level: slog.LevelWarn})), "CreateVolume", time.Millisecond)
	if quiet.Len() != 0 {
		t.Fatalf("logDone wrote %q at warn level", quiet.String())
	}
}
