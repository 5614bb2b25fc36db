package containers_test

import "github.com/moby/moby/api/types/container"

// privileged is Docker's --privileged without CAP_SYS_RESOURCE (which runc
// cannot grant on the lab machines), plus what a kernel-mode simulator
// uses from the host: configfs, /dev (loop devices), the modules, and the
// switchyard-lab binary at bin.
func privileged(bin string) func(*container.HostConfig) {
	return func(hc *container.HostConfig) {
		hc.CapAdd = []string{"ALL"}
		hc.CapDrop = []string{"SYS_RESOURCE"}
		hc.SecurityOpt = []string{"seccomp=unconfined", "apparmor=unconfined"}
		hc.DeviceCgroupRules = []string{"b *:* rmw", "c *:* rmw"}
		hc.Binds = append(hc.Binds,
			"/dev:/dev", "/sys/kernel/config:/sys/kernel/config", "/lib/modules:/lib/modules:ro",
			bin+":/usr/local/bin/switchyard-lab:ro")
	}
}
