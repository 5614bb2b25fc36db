package vm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeQemu puts a qemu-system-x86_64 script first in PATH that plays the
// guest: it prints the init's events, then behaves as body says, with
// $share the directory of -virtfs.
func fakeQemu(t *testing.T, body string) *Image {
	t.Helper()
	bin := t.TempDir()
	script := `#!/bin/sh
share=$(echo "$@" | sed -n 's/.*local,path=\([^ ]*\),mount_tag=lab.*/\1/p')
echo "SeaBIOS"
echo "LAB: base-ready uptime=0.5"
echo "LAB: run-start uptime=0.6"
` + body
	if err := os.WriteFile(filepath.Join(bin, "qemu-system-x86_64"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	return &Image{Kernel: "/k", Initrd: "/i", Disk: "/d"}
}

// A long-lived guest that honours the stop file: Stop ends it cleanly
// with run.sh's exit code, and WaitEvent sees events in order.
func TestMachineStopsCleanly(t *testing.T) {
	img := fakeQemu(t, `
echo "LAB: node-ready uptime=1.0"
while [ ! -e "$share/stop" ]; do sleep 0.05; done
echo "LAB: node-stopping"
echo 7 >"$share/rc"
`)
	share := t.TempDir()
	// Left over from an earlier boot: must not stop this one at once.
	if err := os.WriteFile(filepath.Join(share, StopFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m, err := img.Start(ctx, RunOptions{Share: share})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := m.WaitEvent(ctx, "node-ready")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ev, "node-ready uptime=") {
		t.Errorf("event %q", ev)
	}
	select {
	case <-m.Done():
		t.Fatal("the VM stopped before Stop: the stale stop file was not cleared")
	case <-time.After(200 * time.Millisecond):
	}
	if !strings.Contains(m.Console(), "LAB: node-ready") {
		t.Errorf("console %q", m.Console())
	}
	res, err := m.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 7 || res.BootSeconds <= 0 || !strings.Contains(res.Console, "node-stopping") {
		t.Errorf("result %+v", res)
	}
	// Stopping again returns the same result.
	if res2, err := m.Stop(ctx); err != nil || res2 != res {
		t.Errorf("second Stop: %v %+v", err, res2)
	}
}

// A guest that ignores the stop file is killed when Stop's context ends,
// and the error says so.
func TestMachineStopKillsAStuckGuest(t *testing.T) {
	img := fakeQemu(t, "sleep 60\n")
	m, err := img.Start(context.Background(), RunOptions{Share: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.WaitEvent(context.Background(), "run-start"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = m.Stop(ctx)
	if err == nil || !strings.Contains(err.Error(), "did not power off") {
		t.Errorf("Stop of a stuck guest: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Stop took %s", d)
	}
}

// WaitEvent fails, with the console, when the VM powers off without the
// event; and when its context ends.
func TestMachineWaitEventFails(t *testing.T) {
	img := fakeQemu(t, `echo "kernel panic: something"; echo 1 >"$share/rc"`+"\n")
	m, err := img.Start(context.Background(), RunOptions{Share: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.WaitEvent(context.Background(), "node-ready")
	if err == nil || !strings.Contains(err.Error(), "powered off") || !strings.Contains(err.Error(), "kernel panic") {
		t.Errorf("WaitEvent: %v", err)
	}
	if res, err := m.Wait(); err != nil || res.ExitCode != 1 {
		t.Errorf("Wait: %v %+v", err, res)
	}

	img = fakeQemu(t, "sleep 60\n")
	vmCtx, stopVM := context.WithCancel(context.Background())
	m, err = img.Start(vmCtx, RunOptions{Share: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := m.WaitEvent(ctx, "never"); err == nil || !strings.Contains(err.Error(), "no \"LAB: never\"") {
		t.Errorf("WaitEvent with an ended context: %v", err)
	}
	// The VM's own context kills it.
	stopVM()
	if _, err := m.Wait(); err == nil || !strings.Contains(err.Error(), "qemu killed") {
		t.Errorf("Wait after the context ended: %v", err)
	}
}

// Guest forwards need socat on the host; its absence is named.
func TestMachineGuestForwardNeedsSocat(t *testing.T) {
	img := fakeQemu(t, "")
	t.Setenv("PATH", filepath.Dir(lookToolOrEmpty("qemu-system-x86_64")))
	saved := sbinDirs
	sbinDirs = nil
	defer func() { sbinDirs = saved }()
	_, err := img.Start(context.Background(), RunOptions{Share: t.TempDir(),
		GuestForward: []GuestForward{{APIServerGuestAddr, 6443, 16443}}})
	if err == nil || !strings.Contains(err.Error(), "package socat") {
		t.Errorf("Start without socat: %v", err)
	}
}

func lookToolOrEmpty(name string) string {
	p, _ := LookTool(name)
	return p
}

// QEMU crashing by itself before the guest's init started (its TCG has,
// in the BIOS) is booted once more; a second crash, or a crash after
// base-ready, is the caller's error.
func TestRunRetriesQemuCrashInBoot(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		wantErr    bool
		wantBoots  int
	}{
		{"first boot crashes", `if [ ! -e "$share/crashed" ]; then touch "$share/crashed"; kill -SEGV $$; fi
echo "LAB: base-ready uptime=0.5"; echo 0 >"$share/rc"`, false, 2},
		{"every boot crashes", `kill -SEGV $$`, true, 2},
		{"crash after base-ready", `echo "LAB: base-ready uptime=0.5"; kill -SEGV $$`, true, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			script := "#!/bin/sh\nshare=$(echo \"$@\" | sed -n 's/.*local,path=\\([^ ]*\\),mount_tag=lab.*/\\1/p')\necho boot >>\"$share/boots\"\necho SeaBIOS\n" + tt.body + "\n"
			if err := os.WriteFile(filepath.Join(bin, "qemu-system-x86_64"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
			img := &Image{Kernel: "/k", Initrd: "/i", Disk: "/d"}
			share := t.TempDir()
			var console strings.Builder
			res, err := img.Run(context.Background(), RunOptions{Share: share, Timeout: 20 * time.Second, Console: &console})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v; console:\n%s", err, tt.wantErr, console.String())
			}
			b, _ := os.ReadFile(filepath.Join(share, "boots"))
			if got := strings.Count(string(b), "boot"); got != tt.wantBoots {
				t.Errorf("%d boots, want %d", got, tt.wantBoots)
			}
			if !tt.wantErr && res.ExitCode != 0 {
				t.Errorf("exit code %d", res.ExitCode)
			}
			if retried := strings.Contains(console.String(), "booting once more"); retried != (tt.wantBoots == 2) {
				t.Errorf("console says retried: %v:\n%s", retried, console.String())
			}
		})
	}
}
