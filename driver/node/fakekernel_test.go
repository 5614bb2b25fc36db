package node

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// fakeNVMe plays the kernel and nvme-cli for `nvme connect`, `disconnect`
// and `ns-rescan`: connecting creates the subsystem, controller and
// namespace entries in the fake sysfs and the device nodes in the fake
// /dev, laid out as Linux does.
type fakeNVMe struct {
	f *attachFixture
	// native is nvme_core.multipath=Y: one head device per namespace.
	native bool
	// dmMultipath makes a dm-multipath map over a namespace's devices
	// once it has several paths (multipathd's job).
	dmMultipath bool
	// targets are the reachable subsystems: nqn → namespaces.
	targets map[string][]fakeNS
	// listeners are the reachable addresses, "traddr:trsvcid".
	listeners map[string]bool
	// hideUntilRescan: namespaces show only after `nvme ns-rescan`.
	hideUntilRescan bool
	ctrls           int
	subsys          map[string]int // nqn → subsystem instance
	paths           map[string][]string
	ctrlNQN         map[int]string
}

type fakeNS struct {
	nsid int
	uuid string
	size int64
	// udevOnly: the uuid shows only as udev's by-id link.
	udevOnly bool
}

func newFakeNVMe(f *attachFixture, native bool) *fakeNVMe {
	k := &fakeNVMe{f: f, native: native, targets: map[string][]fakeNS{}, listeners: map[string]bool{}, subsys: map[string]int{}, paths: map[string][]string{}, ctrlNQN: map[int]string{}}
	val := "N"
	if native {
		val = "Y"
	}
	f.tree.file("sys/module/nvme_core/parameters/multipath", val+"\n")
	f.sim.on("nvme connect", k.connect)
	f.sim.on("nvme disconnect", k.disconnect)
	f.sim.on("nvme ns-rescan", k.rescan)
	return k
}

func (k *fakeNVMe) connect(argv []string) (string, error) {
	nqn, addr, port := arg(argv, "--nqn"), arg(argv, "--traddr"), arg(argv, "--trsvcid")
	if !k.listeners[addr+":"+port] {
		return "Failed to write to /dev/nvme-fabrics: Connection refused\n", exit(1)
	}
	if _, ok := k.targets[nqn]; !ok {
		return "Failed to write to /dev/nvme-fabrics: Input/output error\n", exit(1)
	}
	for _, p := range k.paths[nqn] {
		if p == addr+":"+port {
			return "Failed to write to /dev/nvme-fabrics: Operation already in progress\n", exit(1)
		}
	}
	tr := k.f.tree
	sub, ok := k.subsys[nqn]
	if !ok {
		sub = len(k.subsys)
		k.subsys[nqn] = sub
		tr.file(fmt.Sprintf("sys/class/nvme-subsystem/nvme-subsys%d/subsysnqn", sub), nqn+"\n")
	}
	c := k.ctrls
	k.ctrls++
	cdir := fmt.Sprintf("sys/class/nvme/nvme%d", c)
	tr.file(cdir+"/state", "live\n")
	tr.file(cdir+"/transport", arg(argv, "--transport")+"\n")
	tr.file(cdir+"/address", fmt.Sprintf("traddr=%s,trsvcid=%s,src_addr=10.0.0.1\n", addr, port))
	tr.link(fmt.Sprintf("sys/class/nvme-subsystem/nvme-subsys%d/nvme%d", sub, c), tr.path(cdir))
	tr.device(fmt.Sprintf("dev/nvme%d", c), 0)
	k.paths[nqn] = append(k.paths[nqn], addr+":"+port)
	k.ctrlNQN[c] = nqn
	if !k.hideUntilRescan {
		k.populate(nqn, c)
	}
	return "connecting to device: nvme" + fmt.Sprint(c) + "\n", nil
}

// populate makes the namespaces of nqn appear on controller c.
func (k *fakeNVMe) populate(nqn string, c int) {
	tr := k.f.tree
	sub := k.subsys[nqn]
	cdir := fmt.Sprintf("sys/class/nvme/nvme%d", c)
	for _, ns := range k.targets[nqn] {
		var dir, name string
		if k.native {
			name = fmt.Sprintf("nvme%dn%d", sub, ns.nsid)
			dir = fmt.Sprintf("sys/class/nvme-subsystem/nvme-subsys%d/%s", sub, name)
			tr.file(fmt.Sprintf("%s/nvme%dc%dn%d/nsid", cdir, sub, c, ns.nsid), fmt.Sprint(ns.nsid))
		} else {
			name = fmt.Sprintf("nvme%dn%d", c, ns.nsid)
			dir = cdir + "/" + name
		}
		tr.file(dir+"/nsid", fmt.Sprintf("%d\n", ns.nsid))
		if ns.udevOnly {
			tr.link("dev/disk/by-id/nvme-uuid."+ns.uuid, "../../"+name)
		} else {
			tr.file(dir+"/uuid", ns.uuid+"\n")
			tr.file(dir+"/wwid", "uuid."+ns.uuid+"\n")
		}
		tr.link("sys/block/"+name, tr.path(dir))
		if !tr.exists("dev/" + name) { // a rescan must not shrink it back
			tr.device("dev/"+name, ns.size)
		}
		if k.dmMultipath && !k.native && len(k.paths[nqn]) > 1 {
			for _, p := range k.nsDevices(ns.nsid) {
				tr.file("sys/block/"+p+"/holders/dm-0", "")
				tr.file("sys/block/dm-0/slaves/"+p, "")
			}
			tr.file("sys/block/dm-0/dm/name", "mpatha\n")
			tr.device("dev/dm-0", ns.size)
		}
	}
}

// rescan is `nvme ns-rescan /dev/nvmeC`: namespaces added since appear.
func (k *fakeNVMe) rescan(argv []string) (string, error) {
	var c int
	if _, err := fmt.Sscanf(argv[len(argv)-1], k.f.tree.path("dev/nvme%d"), &c); err != nil {
		return "", exit(1)
	}
	if nqn, ok := k.ctrlNQN[c]; ok {
		k.populate(nqn, c)
	}
	return "", nil
}

// nsDevices are the per-controller devices of a namespace (no native multipath).
func (k *fakeNVMe) nsDevices(nsid int) []string {
	var out []string
	for c := range k.ctrls {
		name := fmt.Sprintf("nvme%dn%d", c, nsid)
		if k.f.tree.exists("sys/block/" + name) {
			out = append(out, name)
		}
	}
	return out
}

func (k *fakeNVMe) disconnect(argv []string) (string, error) {
	nqn := arg(argv, "--nqn")
	sub, ok := k.subsys[nqn]
	if !ok {
		return fmt.Sprintf("NQN:%s disconnected 0 controller(s)\n", nqn), nil
	}
	k.dropSubsystem(nqn, sub)
	return fmt.Sprintf("NQN:%s disconnected %d controller(s)\n", nqn, len(k.paths[nqn])), nil
}

// dropSubsystem removes a subsystem the way the kernel does on disconnect
// (or when it gives up on a vanished target).
func (k *fakeNVMe) dropSubsystem(nqn string, sub int) {
	tr := k.f.tree
	tr.remove(fmt.Sprintf("sys/class/nvme-subsystem/nvme-subsys%d", sub))
	delete(k.subsys, nqn)
	delete(k.paths, nqn)
}

// fakeISCSI plays open-iscsi for `iscsiadm -m node …`: node records,
// sessions, and on login the LUN's sdX device with its by-path link.
type fakeISCSI struct {
	f *attachFixture
	// luns of each reachable target: iqn → LUN sizes by LUN number.
	luns map[string]map[int]int64
	// portals that answer.
	portals map[string]bool
	// chap, when set for a target, is the password its login needs.
	chap        map[string]string
	records     map[string]map[string]string // iqn@portal → settings
	sessions    map[string][]string          // iqn@portal → sd names
	disks       int
	dmMultipath bool
}

func newFakeISCSI(f *attachFixture) *fakeISCSI {
	k := &fakeISCSI{f: f, luns: map[string]map[int]int64{}, portals: map[string]bool{}, chap: map[string]string{},
		records: map[string]map[string]string{}, sessions: map[string][]string{}}
	f.sim.on("iscsiadm -m node", k.node)
	return k
}

func (k *fakeISCSI) node(argv []string) (string, error) {
	iqn, portal := arg(argv, "-T"), arg(argv, "-p")
	key := iqn + "@" + portal
	last := argv[len(argv)-1]
	switch {
	case arg(argv, "-o") == "new":
		if _, ok := k.sessions[key]; ok {
			return "iscsiadm: a session is using the record\n", exit(15)
		}
		k.records[key] = map[string]string{}
		return fmt.Sprintf("New iSCSI node [tcp:[hw=,ip=,net_if=,iscsi_if=default] %s,1 %s] added\n", portal, iqn), nil
	case arg(argv, "-o") == "show":
		rec, ok := k.records[key]
		if !ok {
			return "iscsiadm: No records found\n", exit(21)
		}
		out := "# BEGIN RECORD 2.1.8\nnode.name = " + iqn + "\nnode.conn[0].address = " + portal + "\n"
		for _, n := range slices.Sorted(maps.Keys(rec)) {
			v := rec[n]
			switch {
			case v == "":
				v = "<empty>"
			case strings.Contains(n, "password") && !slices.Contains(argv, "-S"):
				v = "********" // open-iscsi masks secrets unless -S
			}
			out += n + " = " + v + "\n"
		}
		return out + "# END RECORD\n", nil
	case arg(argv, "-o") == "update":
		rec, ok := k.records[key]
		if !ok {
			return "iscsiadm: No records found\n", exit(21)
		}
		rec[arg(argv, "-n")] = arg(argv, "-v")
		return "", nil
	case arg(argv, "-o") == "delete":
		if _, ok := k.sessions[key]; ok {
			return "iscsiadm: This command will remove the record, but a session is using it.\n", exit(15)
		}
		if _, ok := k.records[key]; !ok {
			return "iscsiadm: No records found\n", exit(21)
		}
		delete(k.records, key)
		return "", nil
	case last == "-l":
		if _, ok := k.sessions[key]; ok {
			return "iscsiadm: default: 1 session requested, but 1 already present.\n", exit(15)
		}
		if !k.portals[portal] {
			return "iscsiadm: Could not login to [iface: default, target: " + iqn + ", portal: " + portal + "].\niscsiadm: initiator reported error (8 - connection timed out)\n", exit(8)
		}
		if pw := k.chap[iqn]; pw != "" && k.records[key]["node.session.auth.password"] != pw {
			return "iscsiadm: initiator reported error (24 - iSCSI login failed due to authorization failure)\n", exit(24)
		}
		var disks []string
		for lun, size := range k.luns[iqn] {
			name := fmt.Sprintf("sd%c", 'b'+k.disks)
			k.disks++
			host, port := portal[:strings.LastIndex(portal, ":")], portal[strings.LastIndex(portal, ":")+1:]
			host = strings.Trim(host, "[]")
			k.f.tree.device("dev/"+name, size)
			k.f.tree.link(fmt.Sprintf("dev/disk/by-path/ip-%s:%s-iscsi-%s-lun-%d", host, port, iqn, lun), "../../"+name)
			k.f.tree.file("sys/block/"+name+"/device/rescan", "")
			disks = append(disks, name)
		}
		k.sessions[key] = disks
		if k.dmMultipath && k.sessionCount(iqn) > 1 {
			for _, ds := range k.sessions {
				for _, d := range ds {
					k.f.tree.file("sys/block/"+d+"/holders/dm-0", "")
					k.f.tree.file("sys/block/dm-0/slaves/"+d, "")
				}
			}
			k.f.tree.file("sys/block/dm-0/dm/name", "mpathb\n")
			k.f.tree.device("dev/dm-0", 1<<30)
		}
		return "Login to [iface: default, target: " + iqn + ", portal: " + portal + "] successful.\n", nil
	case last == "-u":
		disks, ok := k.sessions[key]
		if !ok {
			return "iscsiadm: No matching sessions found\n", exit(21)
		}
		for _, d := range disks {
			k.f.tree.remove("dev/" + d)
			k.f.tree.remove("sys/block/" + d)
		}
		delete(k.sessions, key)
		return "Logout of [sid: 1, target: " + iqn + ", portal: " + portal + "] successful.\n", nil
	case last == "-R":
		if _, ok := k.sessions[key]; !ok {
			return "iscsiadm: No session found.\n", exit(21)
		}
		return "Rescanning session [sid: 1, target: " + iqn + ", portal: " + portal + "]\n", nil
	}
	return "iscsiadm: unknown operation\n", exit(7)
}

func (k *fakeISCSI) sessionCount(iqn string) int {
	n := 0
	for key := range k.sessions {
		if strings.HasPrefix(key, iqn+"@") {
			n++
		}
	}
	return n
}
