// Command pause is the lab's pod sandbox ("infra") container: it holds the
// pod's namespaces open until the kubelet stops it. No registry is
// reachable on the lab machines, so the upstream registry.k8s.io/pause
// image cannot be pulled; this static binary in a FROM-scratch image takes
// its place (scripts/images.sh names it like the upstream image).
//
// As PID 1 of a pod that shares its PID namespace it must also reap
// orphaned children, or they stay zombies for the pod's lifetime.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("switchyard-lab pause")
		return
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			return
		}
		reap()
	}
}

// reap collects every child that has exited; several may share one SIGCHLD.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
