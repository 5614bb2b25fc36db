package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/lab/vm"
)

// The Kubernetes node in the storage VM: a kubelet whose kernel has the
// NVMe/TCP, iSCSI, NFS and SMB clients and targets the host lacks, joined
// to the local control plane (lab-machine.md, "A real Kubernetes node ...
// In the storage VM"). It is a NodeStarter: put VMNode(o) or NewVMNode in
// Options.ExtraNodes.
//
// Networking, as the host and the guest see it:
//   - the guest reaches the apiserver at https://10.0.2.100:6443, which
//     QEMU turns into one host socat per connection to 127.0.0.1:16443
//     (vm.GuestForward); pods reach it at the kubernetes service's
//     ClusterIP, forwarded in the guest as on the host node;
//   - the node's InternalIP (NodeIP) is on a veth of its own on the host
//     and on the guest's eth0: the apiserver dials NodeIP:KubeletPort
//     (kubectl logs/exec) and QEMU forwards that host address into the guest;
//   - each simulator's management port is forwarded from 127.0.0.1 on the
//     host (same port number in the guest); its targets and shares listen
//     on 127.0.0.1 in the guest, where the node's pods attach them.
const (
	DefaultVMNodeName = "storage-vm"
	// DefaultVMNodeIP is next to the host node's 10.250.0.1.
	DefaultVMNodeIP = "10.250.0.2"
	// DefaultVMKubeletPort is the kubelet's port in the guest and at
	// NodeIP on the host; its healthz port (in the guest) is the next one.
	DefaultVMKubeletPort = 17010
	// DefaultVMPodSubnet is the VM's pods' network (host-local IPAM on
	// the VM's bridge; pods on other nodes cannot reach it).
	DefaultVMPodSubnet = "10.244.217.0/24"
	// ZoneLabel is the well-known topology label (a kubelet may set it).
	ZoneLabel = "topology.kubernetes.io/zone"
	// VMNodeLabel marks the storage VM's node, for node selectors.
	VMNodeLabel = "lab.switchyard.io/storage-vm"
	// DefaultSimPassword is the password of the default simulators' root
	// (SSH, TrueNAS API and SMB).
	DefaultSimPassword = "switchyard-lab"

	vmAPIServerGuestPort = 6443
	vmNodeMemoryMB       = 3072
	vmNodeReadyTimeout   = 6 * time.Minute
	// vmStopGrace is how long the guest gets to stop: within the 15 s
	// that the cluster's Stop gives a process before SIGKILL.
	vmStopGrace = 10 * time.Second
)

// vmSimPortRange is where free host ports for simulators are looked for.
var vmSimPortRange = [2]int{17020, 17099}

// VMSimulatorKind names a simulator of switchyard-lab.
type VMSimulatorKind string

// The simulators that run in the VM.
const (
	SimZFSSSH  VMSimulatorKind = "zfs-ssh" // SSH; --kernel
	SimTrueNAS VMSimulatorKind = "truenas" // REST/WebSocket API; --kernel
	// SimInfinia is the Infinia REST API. Its command has no --kernel
	// yet: its NVMe subsystems are modelled, not served by the VM.
	SimInfinia VMSimulatorKind = "infinia"
	// SimSynology is the DSM Web API; --kernel: LUNs over LIO, shares
	// over nfsd and samba.
	SimSynology VMSimulatorKind = "synology"
)

// VMSimulator is a storage simulator started inside the VM, its targets
// and shares served by the VM's kernel.
type VMSimulator struct {
	Kind VMSimulatorKind
	// Name is unique in the VM ([a-z0-9-]); its state lives in
	// /var/lib/switchyard-sim/<Name> in the guest, its log in the
	// share's logs/sim-<Name>.log.
	Name string
	// HostPort: 127.0.0.1:HostPort on the host reaches the management
	// port, the same port number in the guest. 0: a free port in
	// 17020-17099.
	HostPort int
	// Args are further flags after --state, --listen (and --kernel):
	// credentials (--password, --api-key), --version for TrueNAS, ...
	// They may hold secrets: they stay in the share, never on a console
	// or in vmnode.json.
	Args []string
}

// DefaultVMSimulators are the simulators of `switchyard-lab cluster up
// --vm`: one of each kind at fixed ports, root's password
// DefaultSimPassword, TrueNAS 25.10, Infinia over plain http.
func DefaultVMSimulators() []VMSimulator {
	return []VMSimulator{
		{Kind: SimZFSSSH, Name: "zfs-ssh", HostPort: 17022, Args: []string{"--user", "root", "--password", DefaultSimPassword}},
		{Kind: SimTrueNAS, Name: "truenas", HostPort: 17023, Args: []string{"--version", "25.10", "--user", "root", "--password", DefaultSimPassword}},
		{Kind: SimInfinia, Name: "infinia", HostPort: 17024, Args: []string{"--plain"}},
		// DSM's account is admin (e2e-lab's -synology-user), also the
		// SMB account of its shares.
		{Kind: SimSynology, Name: "synology", HostPort: 17025, Args: []string{"--plain", "--password", DefaultSimPassword}},
	}
}

// VMNodeOptions configure the node VM.
type VMNodeOptions struct {
	Name   string            // default DefaultVMNodeName
	Zone   string            // ZoneLabel's value; default the node's name
	Labels map[string]string // more node labels

	NodeIP      string // default DefaultVMNodeIP
	KubeletPort int    // default DefaultVMKubeletPort
	PodSubnet   string // default DefaultVMPodSubnet

	// Images are more docker-archive tarballs to import, besides the
	// cluster's pause image and Options.Images.
	Images []string

	Simulators []VMSimulator
	// LabBinary is a static switchyard-lab for the simulators; built
	// (CGO_ENABLED=0) from this module when empty.
	LabBinary string

	// Image is the VM image; default vm.EnsureImage with vm.NodePackages.
	Image    *vm.Image
	MemoryMB int // default 3072
	CPUs     int // default 2
}

// VMNodeStarter starts the node VM for the local cluster (a NodeStarter).
type VMNodeStarter struct{ o VMNodeOptions }

func init() {
	newVMNode = func(Options) (NodeStarter, error) {
		return NewVMNode(VMNodeOptions{Simulators: DefaultVMSimulators()})
	}
}

// NewVMNode checks o, fills in the defaults and picks the simulators'
// free ports.
func NewVMNode(o VMNodeOptions) (*VMNodeStarter, error) {
	o, err := vmNodeDefaults(o)
	if err != nil {
		return nil, err
	}
	return &VMNodeStarter{o: o}, nil
}

// NodeName is the Node object's name.
func (v *VMNodeStarter) NodeName() string { return v.o.Name }

// Info is what the node will be: its address and its simulators' ports.
func (v *VMNodeStarter) Info() VMNodeInfo { return vmInfo(v.o) }

// VMNodeInfo describes a node VM for the programs that use it (the e2e
// suite writes the controller's connection files from it). StartNode
// writes it as vmnode.json in the node's directory; ReadVMNodeInfo reads it.
type VMNodeInfo struct {
	Name        string `json:"name"`
	NodeIP      string `json:"nodeIP"`
	KubeletPort int    `json:"kubeletPort"`
	// Simulators by name: kind and the host address of the management port.
	Simulators map[string]VMSimulatorInfo `json:"simulators"`
	// Dir is the host directory shared with the guest (its logs/ holds
	// kubelet.log, containerd.log, images.log, sim-<name>.log); Console
	// the serial console's log.
	Dir     string `json:"dir"`
	Console string `json:"console"`
}

// VMSimulatorInfo is one simulator of VMNodeInfo.
type VMSimulatorInfo struct {
	Kind VMSimulatorKind `json:"kind"`
	// Addr is 127.0.0.1:<host port>.
	Addr string `json:"addr"`
}

const vmInfoFile = "vmnode.json"

// VMNodeDir is the node VM's directory in the cluster's state dir.
func VMNodeDir(stateDir, name string) string { return filepath.Join(stateDir, "vm", name) }

// ReadVMNodeInfo reads the vmnode.json of node name in the cluster's
// state directory (a cluster started by another process).
func ReadVMNodeInfo(stateDir, name string) (*VMNodeInfo, error) {
	b, err := os.ReadFile(filepath.Join(VMNodeDir(stateDir, name), vmInfoFile))
	if err != nil {
		return nil, fmt.Errorf("no storage VM node %s in %s: %w", name, stateDir, err)
	}
	var in VMNodeInfo
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(VMNodeDir(stateDir, name), vmInfoFile), err)
	}
	return &in, nil
}

func vmInfo(o VMNodeOptions) VMNodeInfo {
	in := VMNodeInfo{Name: o.Name, NodeIP: o.NodeIP, KubeletPort: o.KubeletPort, Simulators: map[string]VMSimulatorInfo{}}
	for _, s := range o.Simulators {
		in.Simulators[s.Name] = VMSimulatorInfo{Kind: s.Kind, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.HostPort))}
	}
	return in
}

// StartNode prepares the share (the node's bootstrap files, kubelet,
// images, configuration, simulators) in <state>/vm/<name>, starts QEMU
// through c.Spawn (so the cluster's Stop stops it) and returns once the
// kubelet runs in the guest; Start then waits for the node to be Ready.
func (v *VMNodeStarter) StartNode(ctx context.Context, c *Local) error {
	o := v.o
	share := vmShare{dir: VMNodeDir(c.StateDir(), o.Name)}
	procName := "vm-" + o.Name
	if c.Running(procName) {
		return fmt.Errorf("vmnode: %s already runs (pid file in %s)", procName, c.path("run"))
	}
	// A fresh share: the guest's logs and stop file of the last run go.
	if err := os.RemoveAll(share.dir); err != nil {
		return fmt.Errorf("vmnode: %w", err)
	}
	if err := os.MkdirAll(share.dir, 0o700); err != nil { // the simulators' credentials
		return fmt.Errorf("vmnode: %w", err)
	}
	img := o.Image
	if img == nil {
		var log strings.Builder
		var err error
		if img, err = vm.EnsureImage(ctx, vm.ImageOptions{ExtraPackages: vm.NodePackages, Log: &log}); err != nil {
			return fmt.Errorf("vmnode: the node image: %w\n%s", err, vmLastLines(log.String(), 20))
		}
	}
	pauseTar, pauseRef, err := c.pauseImage(ctx)
	if err != nil {
		return fmt.Errorf("vmnode: the pause image: %w", err)
	}
	cfg := vmShareConfig{
		NodeName: o.Name, NodeIP: o.NodeIP, PodSubnet: o.PodSubnet, SandboxImage: pauseRef,
		ServiceIP: APIServiceIP.String(), Labels: o.Labels,
		APIServer: net.JoinHostPort(vm.APIServerGuestAddr, strconv.Itoa(vmAPIServerGuestPort)),
	}
	if err := share.prepare(); err != nil {
		return fmt.Errorf("vmnode: %w", err)
	}
	tars := append(append([]string{pauseTar}, c.o.Images...), o.Images...)
	// The images ready in a store disk (built on the host once per set of
	// images), else the guest imports the tarballs from the share.
	var disks []string
	if err := c.step("vm: image store", func() error {
		disk, err := vmImageStore(ctx, tars)
		if err == nil {
			disks, cfg.ImageStore = []string{disk}, VMStoreLabel
		}
		return err
	}); err != nil {
		c.logf("vmnode: no image store (%v): the guest imports the images (minutes under TCG)", err)
	}
	for _, tar := range tars {
		if cfg.ImageStore != "" {
			break
		}
		name := fmt.Sprintf("%02d-%s", len(cfg.Images), filepath.Base(tar))
		if err := vmLinkOrCopy(tar, share.path("images", name)); err != nil {
			return fmt.Errorf("vmnode: image %s: %w", tar, err)
		}
		cfg.Images = append(cfg.Images, name)
	}
	err = c.WriteNodeFiles(share.nodeDir(), o.Name, o.NodeIP, "https://"+cfg.APIServer, KubeletOptions{
		Port: o.KubeletPort, HealthzPort: o.KubeletPort + 1,
	})
	if err != nil {
		return fmt.Errorf("vmnode: the node's bootstrap files: %w", err)
	}
	cfg.KubeletArgs = KubeletArgs(vmGuestNodeDir, o.Name, o.NodeIP)
	if err := vmLinkOrCopy(filepath.Join(c.BinDir(), "kubelet"), share.path("bin", "kubelet")); err != nil {
		return fmt.Errorf("vmnode: the kubelet: %w", err)
	}
	forwards := []vm.PortForward{{HostAddr: o.NodeIP, HostPort: o.KubeletPort, GuestPort: o.KubeletPort}}
	for _, s := range o.Simulators {
		cfg.Simulators = append(cfg.Simulators, vmSimulatorCmd(s))
		forwards = append(forwards, vm.PortForward{HostPort: s.HostPort, GuestPort: s.HostPort})
	}
	if len(o.Simulators) > 0 {
		if err := c.step("vm: switchyard-lab for the simulators", func() error {
			if o.LabBinary != "" {
				return vmLinkOrCopy(o.LabBinary, share.path("bin", "switchyard-lab"))
			}
			return vm.BuildBinary(ctx, "github.com/switchyard-csi/switchyard/cmd/switchyard-lab", share.path("bin", "switchyard-lab"))
		}); err != nil {
			return fmt.Errorf("vmnode: %w", err)
		}
	}
	if err := share.writeGuestFiles(cfg); err != nil {
		return fmt.Errorf("vmnode: writing the share: %w", err)
	}
	argv, err := img.Command(vm.RunOptions{
		Share: share.dir, Udev: true, MemoryMB: o.MemoryMB, CPUs: o.CPUs, Forward: forwards, Disks: disks,
		GuestForward: []vm.GuestForward{{GuestAddr: vm.APIServerGuestAddr, GuestPort: vmAPIServerGuestPort, HostPort: APIServerPort}},
	})
	if err != nil {
		return fmt.Errorf("vmnode: %w", err)
	}
	hostEnv := vmHostEnv(o.NodeIP, fmt.Sprintf("syvm%d", o.KubeletPort), share.dir, vmStopGrace)
	if err := os.WriteFile(share.path("host.env"), []byte(hostEnv), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(share.path("host.sh"), []byte(vmHostScript), 0o755); err != nil {
		return err
	}
	info := vmInfo(o)
	info.Dir, info.Console = share.dir, c.LogPath(procName)
	b, _ := json.MarshalIndent(info, "", "  ")
	if err := os.WriteFile(share.path(vmInfoFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	// The console log is appended to by every run: start reading at its end.
	from := int64(0)
	if st, err := os.Stat(c.LogPath(procName)); err == nil {
		from = st.Size()
	}
	start := time.Now()
	if err := c.Spawn(procName, append([]string{"/bin/sh", share.path("host.sh"), share.path("host.env")}, argv...), nil); err != nil {
		return fmt.Errorf("vmnode: %w", err)
	}
	ev, err := vmWaitKubelet(ctx, c.LogPath(procName), from, func() bool { return c.Running(procName) }, vmNodeReadyTimeout)
	if err != nil {
		return fmt.Errorf("vmnode %s: %w; the guest's logs are in %s", o.Name, err, share.logsDir())
	}
	c.logf("%-28s %5.1fs (boot %.1f, containerd %.1f, images %.1f; guest uptime)", "vm: kubelet started",
		time.Since(start).Seconds(), ev.Boot, ev.ContainerdReady, ev.ImagesImported)
	return nil
}

// VMNodeEvents are the guest's milestones, in seconds of guest uptime.
type VMNodeEvents struct {
	Boot, ContainerdReady, ImagesImported, KubeletStarted float64
}

// vmWaitKubelet follows the console log from offset from until the guest
// says kubelet-started, fails on node-failed, or QEMU's exit (running
// false), or the timeout.
func vmWaitKubelet(ctx context.Context, console string, from int64, running func() bool, timeout time.Duration) (VMNodeEvents, error) {
	var ev VMNodeEvents
	deadline := time.Now().Add(timeout)
	for {
		text := vmReadFrom(console, from)
		for _, line := range strings.Split(text, "\n") {
			_, e, ok := strings.Cut(strings.TrimRight(line, "\r"), "LAB: ")
			if !ok {
				continue
			}
			up := 0.0
			if i := strings.LastIndex(e, " uptime="); i >= 0 {
				up, _ = strconv.ParseFloat(e[i+len(" uptime="):], 64)
			}
			switch {
			case strings.HasPrefix(e, "base-ready"):
				ev.Boot = up
			case strings.HasPrefix(e, "containerd-ready"):
				ev.ContainerdReady = up
			case strings.HasPrefix(e, "images-imported"):
				ev.ImagesImported = up
			case strings.HasPrefix(e, "kubelet-started"):
				ev.KubeletStarted = up
				return ev, nil
			case strings.HasPrefix(e, "node-failed"):
				return ev, fmt.Errorf("the guest says %s; console ends with:\n%s", e, vmLastLines(text, 25))
			}
		}
		if !running() {
			return ev, fmt.Errorf("QEMU exited before the kubelet started; console ends with:\n%s", vmLastLines(text, 25))
		}
		if time.Now().After(deadline) {
			return ev, fmt.Errorf("the kubelet did not start within %s; console ends with:\n%s", timeout, vmLastLines(text, 25))
		}
		select {
		case <-ctx.Done():
			return ev, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// vmReadFrom reads a file from an offset ("" when unreadable).
func vmReadFrom(path string, from int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(from, 0); err != nil {
		return ""
	}
	b := make([]byte, 0, 64*1024)
	buf := make([]byte, 32*1024)
	for {
		n, err := f.Read(buf)
		b = append(b, buf[:n]...)
		if err != nil {
			return string(b)
		}
	}
}

// vmNodeDefaults checks o and fills in the defaults, with free ports for
// the simulators.
func vmNodeDefaults(o VMNodeOptions) (VMNodeOptions, error) {
	var problems []string
	if o.Name == "" {
		o.Name = DefaultVMNodeName
	}
	if !vmSimName.MatchString(o.Name) {
		problems = append(problems, fmt.Sprintf("node name %q: want a-z, 0-9 and - (at most 32)", o.Name))
	}
	if o.Zone == "" {
		o.Zone = o.Name
	}
	if o.NodeIP == "" {
		o.NodeIP = DefaultVMNodeIP
	}
	if ip := net.ParseIP(o.NodeIP).To4(); ip == nil || ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() ||
		(ip[0] == 10 && ip[1] == 0 && ip[2] == 2) {
		problems = append(problems, fmt.Sprintf("NodeIP %q: want an IPv4 address outside 127/8, 169.254/16 and QEMU's 10.0.2.0/24 (the kubelet refuses loopback)", o.NodeIP))
	}
	if o.KubeletPort == 0 {
		o.KubeletPort = DefaultVMKubeletPort
	}
	if o.KubeletPort < 1024 || o.KubeletPort > 65534 {
		problems = append(problems, fmt.Sprintf("KubeletPort %d: want 1024-65534 (its healthz port is the next one)", o.KubeletPort))
	}
	if o.PodSubnet == "" {
		o.PodSubnet = DefaultVMPodSubnet
	}
	if _, _, err := net.ParseCIDR(o.PodSubnet); err != nil {
		problems = append(problems, fmt.Sprintf("PodSubnet: %v", err))
	}
	if o.MemoryMB == 0 {
		o.MemoryMB = vmNodeMemoryMB
	}
	for _, im := range o.Images {
		if st, err := os.Stat(im); err != nil || !st.Mode().IsRegular() {
			problems = append(problems, fmt.Sprintf("image %s is not a file", im))
		}
	}
	labels := map[string]string{ZoneLabel: o.Zone, VMNodeLabel: "true"}
	for k, v := range o.Labels {
		labels[k] = v
	}
	for k, v := range labels {
		if !vmLabelKey.MatchString(k) || !vmLabelValue.MatchString(v) {
			problems = append(problems, fmt.Sprintf("label %s=%s is not a valid Kubernetes label", k, v))
		}
	}
	o.Labels = labels
	used := map[int]string{o.KubeletPort: "the kubelet's", o.KubeletPort + 1: "the kubelet's healthz"}
	names := map[string]bool{}
	sims := make([]VMSimulator, len(o.Simulators))
	copy(sims, o.Simulators)
	for i := range sims {
		s := &sims[i]
		switch s.Kind {
		case SimZFSSSH, SimTrueNAS, SimInfinia, SimSynology:
		default:
			problems = append(problems, fmt.Sprintf("simulator %q: unknown kind %q (want %s, %s, %s or %s)", s.Name, s.Kind, SimZFSSSH, SimTrueNAS, SimInfinia, SimSynology))
		}
		if !vmSimName.MatchString(s.Name) || names[s.Name] {
			problems = append(problems, fmt.Sprintf("simulator name %q: want a unique name of a-z, 0-9 and -", s.Name))
		}
		names[s.Name] = true
		if s.HostPort == 0 {
			p, err := vmFreePortIn(vmSimPortRange, used)
			if err != nil {
				problems = append(problems, err.Error())
			}
			s.HostPort = p
		}
		if other, ok := used[s.HostPort]; ok {
			problems = append(problems, fmt.Sprintf("simulator %s: port %d is %s", s.Name, s.HostPort, other))
		}
		used[s.HostPort] = "simulator " + s.Name + "'s"
	}
	o.Simulators = sims
	if len(problems) > 0 {
		return o, errors.New("vmnode: " + strings.Join(problems, "; "))
	}
	return o, nil
}

// vmSimulatorCmd is a simulator's switchyard-lab command line in the
// guest: its management port on every guest address (QEMU's forward
// arrives at the guest's eth0), its targets in the VM's kernel.
func vmSimulatorCmd(s VMSimulator) vmSimulatorCommand {
	args := []string{string(s.Kind), "--state", vmSimStateDir(s.Name), "--listen", net.JoinHostPort("0.0.0.0", strconv.Itoa(s.HostPort)), "--kernel"}
	return vmSimulatorCommand{Name: s.Name, Args: append(args, s.Args...)}
}

// vmFreePortIn finds a port of r free on 127.0.0.1 and not in used.
func vmFreePortIn(r [2]int, used map[int]string) (int, error) {
	for p := r[0]; p <= r[1]; p++ {
		if _, ok := used[p]; ok {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		l.Close()
		return p, nil
	}
	return 0, fmt.Errorf("no free port in %d-%d for a simulator", r[0], r[1])
}

// vmLastLines returns the last n lines of s.
func vmLastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
