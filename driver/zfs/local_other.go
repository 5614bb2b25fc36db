//go:build !unix

package zfs

import "os/exec"

// localKillGroup: without process groups, cancellation kills the shell only.
func localKillGroup(*exec.Cmd) {}

func localExitCode(cmd *exec.Cmd) int {
	if cmd.ProcessState == nil {
		return -1
	}
	return cmd.ProcessState.ExitCode()
}
