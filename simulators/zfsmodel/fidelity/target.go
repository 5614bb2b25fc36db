package fidelity

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// Result is what one zfs command line printed and returned.
type Result struct {
	Stdout string
	Stderr string
	Code   int
}

// Target runs zfs command lines (args exclude the program name) and gives
// access to the files of mounted filesystems.
type Target interface {
	ZFS(args []string, stdin []byte) Result
	// Dir is the directory on this machine holding the files of the
	// filesystem mounted at mountpoint (a path as zfs reports it).
	Dir(mountpoint string) (string, error)
}

// Model runs command lines through the model's CLI emulation.
type Model struct{ M *zfsmodel.Model }

// ZFS implements Target.
func (t Model) ZFS(args []string, stdin []byte) Result {
	var out, errb bytes.Buffer
	code := t.M.ZFS(args, bytes.NewReader(stdin), &out, &errb)
	return Result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// Dir implements Target.
func (t Model) Dir(mountpoint string) (string, error) {
	d, ok := t.M.HostPath(mountpoint)
	if !ok {
		return "", errors.New("model: no mounted filesystem at " + mountpoint)
	}
	return d, nil
}

// Real runs the zfs binary at Bin.
type Real struct{ Bin string }

// ZFS implements Target. A command that cannot be started reports code -1
// and the reason on stderr.
func (t Real) ZFS(args []string, stdin []byte) Result {
	cmd := exec.Command(t.Bin, args...)
	// The C locale keeps dates and messages in the form being compared.
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		code = -1
		errb.WriteString(err.Error() + "\n")
	}
	return Result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// Dir implements Target: real filesystems are mounted where they say.
func (t Real) Dir(mountpoint string) (string, error) {
	if !filepath.IsAbs(mountpoint) {
		return "", errors.New("real zfs: not a mountpoint: " + mountpoint)
	}
	return mountpoint, nil
}

// Mountpoint asks t for the mountpoint of filesystem ds.
func Mountpoint(t Target, ds string) (string, error) {
	r := t.ZFS([]string{"get", "-H", "-o", "value", "mountpoint", ds}, nil)
	if r.Code != 0 {
		return "", errors.New(strings.TrimSpace(r.Stderr))
	}
	return strings.TrimSpace(r.Stdout), nil
}
