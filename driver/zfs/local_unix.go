//go:build unix

package zfs

import (
	"os/exec"
	"syscall"
)

// localKillGroup makes the shell lead its own process group and has
// cancellation kill the whole group: killing only the shell would leave
// the zfs (or sleep) it started running and holding the output pipes.
func localKillGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// localExitCode is the shell's exit status, or 128+n when signal n killed it
// (what a shell reports, and what the SSH executor returns).
func localExitCode(cmd *exec.Cmd) int {
	ps := cmd.ProcessState
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
