package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// scriptedExec answers the host probe with facts and records every line.
type scriptedExec struct {
	facts string // the probe's stdout
	err   error  // returned by every Run when set
	lines []string
}

func (x *scriptedExec) Run(_ context.Context, line string, _ zfs.RunOptions) (zfs.Output, error) {
	x.lines = append(x.lines, line)
	if x.err != nil {
		return zfs.Output{}, x.err
	}
	if strings.HasPrefix(line, "echo $0") {
		return zfs.Output{Stdout: x.facts}, nil
	}
	return zfs.Output{}, nil
}

func (x *scriptedExec) Close() error { return nil }

func TestCLIHostMaxZvolName(t *testing.T) {
	cases := []struct {
		facts string
		limit int
		host  string
		code  codes.Code
	}{
		{"/bin/sh\nroot\nLinux\n6.1.0\n", 255, "Linux 6.1.0", codes.OK},
		{"/bin/sh\nroot\nFreeBSD\n13.2-RELEASE\n", 255, "FreeBSD 13.2-RELEASE", codes.OK},
		{"/bin/sh\nroot\nFreeBSD\n12.4-RELEASE\n", 63, "FreeBSD 12.4-RELEASE", codes.OK},
		{"/bin/csh\nroot\nFreeBSD\n14.0\n", 0, "", codes.FailedPrecondition},
		// A short answer is a failed probe, retried (not a shell verdict).
		{"/bin/sh\n", 0, "", codes.Unavailable},
	}
	for _, c := range cases {
		x := &scriptedExec{facts: c.facts}
		h := &CLIHost{driver: "zfs-generic-iscsi", exec: x}
		for range 2 {
			limit, host, err := h.MaxZvolName(context.Background())
			if status.Code(err) != c.code || limit != c.limit || host != c.host {
				t.Fatalf("%q: MaxZvolName = %d, %q, %v", c.facts, limit, host, err)
			}
		}
		if want := map[codes.Code]int{codes.OK: 1, codes.FailedPrecondition: 2, codes.Unavailable: 2}[c.code]; len(x.lines) != want {
			t.Errorf("%q: %d probes, want %d (facts are cached once learnt)", c.facts, len(x.lines), want)
		}
	}
}

func TestCLIHostSetPermissions(t *testing.T) {
	p := Permissions{Mode: "0770", User: "1000", Group: "1000", ACLs: []string{"-m everyone@:full_set:allow"}, ACLBinary: "setfacl"}
	for _, c := range []struct {
		user, want string
	}{
		{"root", "chmod 0770 /mnt/tank/v/pvc-1 && chown 1000:1000 /mnt/tank/v/pvc-1 && setfacl -m everyone@:full_set:allow /mnt/tank/v/pvc-1"},
		{"csi", "/usr/bin/sudo chmod 0770 /mnt/tank/v/pvc-1 && /usr/bin/sudo chown 1000:1000 /mnt/tank/v/pvc-1 && /usr/bin/sudo setfacl -m everyone@:full_set:allow /mnt/tank/v/pvc-1"},
	} {
		x := &scriptedExec{facts: "/bin/sh\n" + c.user + "\nLinux\n6.1\n"}
		h := &CLIHost{driver: "zfs-generic-nfs", exec: x, cfg: CLIConfig{Paths: zfs.Paths{Sudo: "/usr/bin/sudo"}}}
		if err := h.SetPermissions(context.Background(), "/mnt/tank/v/pvc-1", p); err != nil {
			t.Fatal(err)
		}
		if got := x.lines[len(x.lines)-1]; got != c.want {
			t.Errorf("as %s ran\n %s\nwant\n %s", c.user, got, c.want)
		}
	}
}

func TestCLIHostTransportErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		code codes.Code
	}{
		{fmt.Errorf("dial: %w", zfs.ErrAuth), codes.FailedPrecondition},
		{fmt.Errorf("dial: %w", zfs.ErrUnreachable), codes.Unavailable},
		{fmt.Errorf("run: %w", zfs.ErrConnectionLost), codes.Unavailable},
		{context.DeadlineExceeded, codes.DeadlineExceeded},
		{fmt.Errorf("something else"), codes.Internal},
	} {
		h := &CLIHost{driver: "freenas-nfs", exec: &scriptedExec{err: c.err}}
		_, err := h.Run(context.Background(), "true", zfs.RunOptions{})
		if status.Code(err) != c.code || !strings.HasPrefix(status.Convert(err).Message(), "freenas-nfs: ") {
			t.Errorf("%v: got %v, want %v", c.err, err, c.code)
		}
	}
}
