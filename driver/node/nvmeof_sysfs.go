package node

import (
	"os"
	"regexp"
	"strings"
	"sync"
)

// The kernel's view of NVMe (sysfs), which nvme-cli's list-subsys reads too:
//
//	/sys/class/nvme-subsystem/nvme-subsysN/subsysnqn
//	/sys/class/nvme-subsystem/nvme-subsysN/nvmeM          a controller (path)
//	/sys/class/nvme-subsystem/nvme-subsysN/nvmeNnK        namespace head (native multipath)
//	/sys/class/nvme/nvmeM/{state,transport,address}       state "live" = usable path
//	/sys/class/nvme/nvmeM/nvmeMnK                         namespace (no native multipath)
//	/sys/class/nvme/nvmeM/nvmeMcXnK                       hidden path of a head
//	/sys/block/<ns>/{nsid,uuid,wwid}
//	/sys/module/nvme_core/parameters/multipath            Y = native multipath
var (
	// compiled on first use, not at every start-up
	nvmeCtrlName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^nvme[0-9]+$`) })
	nvmeNSName   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^nvme[0-9]+n[0-9]+$`) }) // not the hidden nvmeXcYnZ paths
)

// nvmeSubsystem is one subsystem the node is connected to.
type nvmeSubsystem struct {
	dir         string   // its sysfs directory
	controllers []string // nvmeM
}

// nvmeSubsystemByNQN finds the subsystem with this NQN; nil when the node
// has no controller of it.
func (h *Host) nvmeSubsystemByNQN(nqn string) *nvmeSubsystem {
	base := h.sys("class", "nvme-subsystem")
	ents, _ := os.ReadDir(base)
	for _, e := range ents {
		dir := base + "/" + e.Name()
		if readSys(dir+"/subsysnqn") != nqn {
			continue
		}
		s := &nvmeSubsystem{dir: dir}
		sub, _ := os.ReadDir(dir)
		for _, c := range sub {
			if nvmeCtrlName().MatchString(c.Name()) {
				s.controllers = append(s.controllers, c.Name())
			}
		}
		return s
	}
	return nil
}

// nvmeCtrl is one controller's sysfs attributes.
type nvmeCtrl struct {
	name, state, transport string
	addr                   map[string]string // traddr, trsvcid, …
}

func (h *Host) nvmeController(name string) nvmeCtrl {
	dir := h.sys("class", "nvme", name)
	c := nvmeCtrl{name: name, state: readSys(dir + "/state"), transport: readSys(dir + "/transport"), addr: map[string]string{}}
	// "traddr=10.0.0.5,trsvcid=4420[,src_addr=…]"; nvme-cli before 2.2
	// printed the fields space-separated, and some kernels did too.
	for _, f := range strings.FieldsFunc(readSys(dir+"/address"), func(r rune) bool { return r == ',' || r == ' ' }) {
		if k, v, ok := strings.Cut(f, "="); ok {
			c.addr[k] = v
		}
	}
	return c
}

// liveControllers are the subsystem's controllers in state "live".
func (h *Host) liveControllers(s *nvmeSubsystem) []nvmeCtrl {
	var out []nvmeCtrl
	for _, name := range s.controllers {
		if c := h.nvmeController(name); c.state == "live" {
			out = append(out, c)
		}
	}
	return out
}

func (h *Host) nativeNVMeMultipath() bool {
	return readSys(h.sys("module", "nvme_core", "parameters", "multipath")) == "Y"
}

// nvmeNamespaces finds the block devices of a namespace: by uuid anywhere
// (the udev link, else each namespace's uuid/wwid attribute), else by nsid
// within the subsystem: its head with native multipath, else the namespace
// under each controller (several paths then need dm-multipath). Devices
// whose node is not yet in /dev are left out.
func (h *Host) nvmeNamespaces(s *nvmeSubsystem, nsid, uuid string) []string {
	var names []string
	switch {
	case uuid != "":
		ents, _ := os.ReadDir(h.sys("block"))
		for _, e := range ents {
			if !nvmeNSName().MatchString(e.Name()) {
				continue
			}
			dir := h.sys("block", e.Name())
			if strings.EqualFold(readSys(dir+"/uuid"), uuid) || strings.EqualFold(readSys(dir+"/wwid"), "uuid."+uuid) {
				names = append(names, e.Name())
			}
		}
		if len(names) == 0 {
			if link := h.dev("disk", "by-id", "nvme-uuid."+strings.ToLower(uuid)); exists(link) {
				return []string{resolved(link)}
			}
		}
	case s == nil:
	case h.nativeNVMeMultipath():
		names = nsIn(s.dir, nsid)
	default:
		for _, c := range s.controllers {
			names = append(names, nsIn(h.sys("class", "nvme", c), nsid)...)
		}
	}
	var out []string
	for _, n := range names {
		if d := h.dev(n); exists(d) {
			out = append(out, d)
		}
	}
	return out
}

// nsIn lists the namespace devices in a sysfs directory with this nsid.
func nsIn(dir, nsid string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if nvmeNSName().MatchString(e.Name()) && readSys(dir+"/"+e.Name()+"/nsid") == nsid {
			out = append(out, e.Name())
		}
	}
	return out
}
