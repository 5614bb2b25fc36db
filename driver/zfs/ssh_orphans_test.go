package zfs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A program lost with its connection runs on (the test server, like sshd,
// lets the session's processes run: ssh_orphans.go); the executor's next
// run first ends it, so the lost program's remaining commands never
// overlap the retry. Real processes: /bin/sh and ps of this machine.
func TestLostProgramIsEndedBeforeTheNextRun(t *testing.T) {
	if _, err := exec.LookPath("ps"); err != nil {
		t.Skip("no ps on this machine")
	}
	srv := newTestSSHServer(t, nil, 0)
	log, buf := debugLogger()
	s := newTestSSH(t, srv, log, nil)
	ctx := testContext(t)
	if _, err := s.Run(ctx, "true", RunOptions{}); err != nil {
		t.Fatal(err)
	}
	late := filepath.Join(t.TempDir(), "late")
	lost := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx, "sleep 1; touch "+Quote(late), RunOptions{})
		lost <- err
	}()
	time.Sleep(300 * time.Millisecond)
	srv.Kill() // the connection drops mid-program; the program runs on
	srv.Start(srv.Addr)
	if err := <-lost; !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("lost run: %v, want ErrConnectionLost", err)
	}
	if len(s.orphans.list()) != 1 {
		t.Fatalf("orphans = %v, want the lost session's id", s.orphans.list())
	}
	out, err := s.Run(ctx, "echo next", RunOptions{})
	if err != nil || out.Stdout != "next\n" {
		t.Fatalf("next run: %+v, %v", out, err)
	}
	if !s.orphans.empty() {
		t.Fatalf("orphans left: %v", s.orphans.list())
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(late); err == nil {
		t.Fatalf("the lost program went on after the next run started:\n%s", buf)
	}
	if !strings.Contains(buf.String(), "ending the commands of lost SSH shell sessions") {
		t.Fatalf("no fence in the log:\n%s", buf)
	}
}

func TestOrphanGroups(t *testing.T) {
	ps := "      1 /sbin/init\n   4242 sh -s bash SWYSaaaa\n   4250 sleep 1\n   5000 sh -c ps -A -o pgid=,args=\n"
	pgids, gone := orphanGroups(ps, []string{"SWYSaaaa", "SWYSbbbb"}, nil)
	if !reflect.DeepEqual(pgids, []int{4242}) || !reflect.DeepEqual(gone, []string{"SWYSbbbb"}) {
		t.Fatalf("pgids %v, gone %v", pgids, gone)
	}
	// The group's leader (the line with the id) killed, a child it could
	// not kill (a sudo'd zfs, root's) runs on in the group: still there.
	ps = "      1 /sbin/init\n   4242 sudo zfs destroy -r -f tank/v\n   4243 zfs destroy -r -f tank/v\n"
	pgids, gone = orphanGroups(ps, []string{"SWYSaaaa"}, map[int]bool{4242: true})
	if !reflect.DeepEqual(pgids, []int{4242}) || !reflect.DeepEqual(gone, []string{"SWYSaaaa"}) {
		t.Fatalf("after the kill: pgids %v, gone %v", pgids, gone)
	}
}
