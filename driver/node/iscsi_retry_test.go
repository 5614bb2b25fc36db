package node

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The kubelet gives NodeStageVolume 2 minutes; on a loaded node the
// iscsiadm calls of one attach took longer. The attach must go on after
// the request gave up, and the kubelet's retry must take its result rather
// than run iscsiadm again.
func TestISCSIStageOutlivesItsRequestAndTheRetryJoins(t *testing.T) {
	f := newAttachFixture(t)
	k := iscsiTargetSim(f)
	login := "iscsiadm -m node -T " + testIQN + " -p 10.0.0.5:3260 -l"
	entered, release := make(chan struct{}), make(chan struct{})
	f.sim.on(login, func(argv []string) (string, error) {
		close(entered)
		<-release // a login that takes longer than the request may wait
		return k.node(argv)
	})
	type result struct {
		err error
	}
	stage := func(ctx context.Context) chan result {
		c := make(chan result, 1)
		go func() {
			_, err := f.svc.NodeStageVolume(ctx, f.stageCtx(iscsiCtx(), blockCap(snw)))
			c <- result{err}
		}()
		return c
	}

	ctx, cancel := context.WithCancel(context.Background())
	first := stage(ctx)
	<-entered
	cancel() // the kubelet's deadline passes mid-login
	var r result
	select {
	case r = <-first:
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("NodeStageVolume did not return when its request's context ended")
	}
	wantCode(t, r.err, codes.Aborted)
	if msg := status.Convert(r.err).Message(); !strings.Contains(msg, "still running") || !strings.Contains(msg, testIQN) {
		t.Errorf("message %q should say the attach of %s goes on", msg, testIQN)
	}

	retry := stage(context.Background())
	select {
	case r := <-retry:
		close(release)
		t.Fatalf("the retry returned (%v) while the first attach still runs: it did not join it", r.err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	select {
	case r = <-retry:
	case <-time.After(5 * time.Second):
		t.Fatal("the retry did not end after the login did")
	}
	if r.err != nil {
		t.Fatalf("retry: %v", r.err)
	}
	node := "iscsiadm -m node -T " + testIQN + " -p 10.0.0.5:3260"
	want := []string{node + " -o new", node + " -o update -n node.startup -v manual", node + " -l", node + " -R"}
	if got := f.sim.lines("iscsiadm"); !slices.Equal(got, want) {
		t.Fatalf("iscsiadm ran\n %q\nwant each step once (the retry joins)\n %q", got, want)
	}
	if !strings.Contains(f.logs.String(), "joining the attach") {
		t.Errorf("no log of the retry joining: %s", f.logs.String())
	}
	// A third request finds the volume staged: no attach at all.
	f.sim.reset()
	f.mustStage(t, f.stageCtx(iscsiCtx(), blockCap(snw)))
	if got := f.sim.lines("iscsiadm"); len(got) != 0 {
		t.Fatalf("staging a staged volume ran %q", got)
	}
}

// A retry after a failed attempt reads the node record and writes only
// the settings that differ; the login and rescan run again.
func TestISCSIRetryWritesOnlyChangedSettings(t *testing.T) {
	f := newAttachFixture(t)
	k := iscsiTargetSim(f)
	k.chap[testIQN] = chapPass
	k.portals["10.0.0.5:3260"] = false // the first attempt cannot log in
	r := f.stageCtx(iscsiCtx(), mountCap(snw))
	r.Secrets = chapSecrets()
	_, err := f.svc.NodeStageVolume(context.Background(), r)
	wantCode(t, err, codes.Internal)

	k.portals["10.0.0.5:3260"] = true
	k.records[testIQN+"@10.0.0.5:3260"]["node.session.auth.username"] = "someone-else" // changed behind our back
	f.sim.reset()
	f.mustStage(t, r)
	node := "iscsiadm -m node -T " + testIQN + " -p 10.0.0.5:3260"
	want := []string{
		node + " -o show -S",
		node + " -o update -n node.session.auth.username -v initiator-user",
		node + " -l",
		node + " -R",
	}
	if got := f.sim.lines("iscsiadm"); !slices.Equal(got, want) {
		t.Fatalf("the retry ran\n %q\nwant\n %q", got, want)
	}
	if strings.Contains(f.logs.String(), chapPass) {
		t.Fatal("the CHAP password read back from the record reached the logs")
	}
}

// A retry whose record vanished (deleted by hand, another tool) makes it
// anew with every setting.
func TestISCSIRetryWithoutRecordMakesIt(t *testing.T) {
	f := newAttachFixture(t)
	k := iscsiTargetSim(f)
	k.portals["10.0.0.5:3260"] = false
	_, err := f.svc.NodeStageVolume(context.Background(), f.stageCtx(iscsiCtx(), mountCap(snw)))
	wantCode(t, err, codes.Internal)

	k.portals["10.0.0.5:3260"] = true
	delete(k.records, testIQN+"@10.0.0.5:3260")
	f.sim.reset()
	f.mustStage(t, f.stageCtx(iscsiCtx(), mountCap(snw)))
	node := "iscsiadm -m node -T " + testIQN + " -p 10.0.0.5:3260"
	want := []string{node + " -o show", node + " -o new", node + " -o update -n node.startup -v manual", node + " -l", node + " -R"}
	if got := f.sim.lines("iscsiadm"); !slices.Equal(got, want) {
		t.Fatalf("the retry ran\n %q\nwant\n %q", got, want)
	}
}

// An attach that finished after its request gave up leaves its device for
// the retry; an unstage in between drops it, so a later stage attaches
// again rather than take a device that was logged out.
func TestISCSIUnstageForgetsAFinishedAttach(t *testing.T) {
	f := newAttachFixture(t)
	k := iscsiTargetSim(f)
	login := "iscsiadm -m node -T " + testIQN + " -p 10.0.0.5:3260 -l"
	entered, release := make(chan struct{}), make(chan struct{})
	f.sim.on(login, func(argv []string) (string, error) {
		select {
		case <-entered:
		default:
			close(entered)
			<-release
		}
		return k.node(argv)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.svc.NodeStageVolume(ctx, f.stageCtx(iscsiCtx(), blockCap(snw)))
		done <- err
	}()
	<-entered
	cancel()
	select {
	case err := <-done:
		wantCode(t, err, codes.Aborted)
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("NodeStageVolume did not return when its request's context ended")
	}
	close(release)
	// The unstage waits for the attach (the target lock), then logs out.
	if err := f.unstage(volID, f.staging); err != nil {
		t.Fatal(err)
	}
	if len(k.sessions) != 0 {
		t.Fatalf("sessions left after the unstage: %v", k.sessions)
	}
	f.sim.reset()
	f.mustStage(t, f.stageCtx(iscsiCtx(), blockCap(snw)))
	if n := len(f.sim.lines(login)); n != 1 {
		t.Fatalf("%d logins after the unstage, want 1 (a new attach)", n)
	}
}
