// Command pause is the local cluster's sandbox image (containerd's
// sandbox_image): the process that holds a pod's namespaces. It waits for
// SIGTERM or SIGINT and exits 0; built CGO_ENABLED=0 so that it runs in a
// FROM-scratch image. As PID 1 of the pod it also reaps orphans, as the
// upstream pause does, so that zombies do not pile up in shared-PID pods.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
