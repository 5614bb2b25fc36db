package cluster

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestVMNodeDefaults(t *testing.T) {
	v, err := NewVMNode(VMNodeOptions{Simulators: []VMSimulator{
		{Kind: SimZFSSSH, Name: "zfs", HostPort: 17030},
		{Kind: SimTrueNAS, Name: "nas"}, // a free port is picked
	}})
	if err != nil {
		t.Fatal(err)
	}
	o := v.o
	if o.Name != DefaultVMNodeName || o.NodeIP != DefaultVMNodeIP || o.KubeletPort != DefaultVMKubeletPort ||
		o.MemoryMB != 3072 || o.PodSubnet != DefaultVMPodSubnet {
		t.Errorf("defaults %+v", o)
	}
	if o.Labels[ZoneLabel] != DefaultVMNodeName || o.Labels[VMNodeLabel] != "true" {
		t.Errorf("labels %v", o.Labels)
	}
	p := o.Simulators[1].HostPort
	if p < vmSimPortRange[0] || p > vmSimPortRange[1] || p == 17030 {
		t.Errorf("picked port %d", p)
	}
	in := v.Info()
	if in.Simulators["zfs"].Addr != "127.0.0.1:17030" || in.Simulators["nas"].Kind != SimTrueNAS {
		t.Errorf("info %+v", in)
	}
	if v.NodeName() != "storage-vm" {
		t.Errorf("NodeName %s", v.NodeName())
	}
}

// Every mistake in the options is named at once, before anything starts.
func TestVMNodeBadOptions(t *testing.T) {
	_, err := NewVMNode(VMNodeOptions{
		NodeIP:      "127.0.0.5",
		KubeletPort: 80,
		PodSubnet:   "10.1.2.0",
		Labels:      map[string]string{"bad key!": "x"},
		Images:      []string{"/nonexistent/image.tar"},
		Simulators: []VMSimulator{
			{Kind: "nfs-server", Name: "a"},
			{Kind: SimZFSSSH, Name: "a", HostPort: 17040},
			{Kind: SimTrueNAS, Name: "Bad_Name", HostPort: 17040},
		},
	})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`NodeIP "127.0.0.5"`, "KubeletPort 80", "PodSubnet", `label bad key!=x`, "/nonexistent/image.tar is not a file",
		`unknown kind "nfs-server"`, `simulator name "a"`, `simulator name "Bad_Name"`, "port 17040 is simulator a's",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := NewVMNode(VMNodeOptions{NodeIP: "10.0.2.15"}); err == nil || !strings.Contains(err.Error(), "10.0.2.0/24") {
		t.Errorf("the guest's own address as node IP: %v", err)
	}
}

// The simulators run with their management port on every guest address
// and their targets in the VM's kernel.
func TestVMSimulatorCommands(t *testing.T) {
	for _, tt := range []struct {
		sim  VMSimulator
		want string
	}{
		{VMSimulator{Kind: SimZFSSSH, Name: "zfs", HostPort: 17022, Args: []string{"--password", "p w"}},
			"zfs-ssh --state /var/lib/switchyard-sim/zfs --listen 0.0.0.0:17022 --kernel --password p w"},
		{VMSimulator{Kind: SimTrueNAS, Name: "nas", HostPort: 17023, Args: []string{"--version", "25.10"}},
			"truenas --state /var/lib/switchyard-sim/nas --listen 0.0.0.0:17023 --kernel --version 25.10"},
		{VMSimulator{Kind: SimInfinia, Name: "inf", HostPort: 17024, Args: []string{"--plain"}},
			"infinia --state /var/lib/switchyard-sim/inf --listen 0.0.0.0:17024 --kernel --plain"},
		{VMSimulator{Kind: SimSynology, Name: "dsm", HostPort: 17025, Args: []string{"--plain"}},
			"synology --state /var/lib/switchyard-sim/dsm --listen 0.0.0.0:17025 --kernel --plain"},
	} {
		if got := strings.Join(vmSimulatorCmd(tt.sim).Args, " "); got != tt.want {
			t.Errorf("%s: %s\nwant %s", tt.sim.Name, got, tt.want)
		}
	}
}

// The share holds what vm-node.sh reads; node.env and the simulators'
// scripts survive quoting (a password with a quote and a space), checked
// by sourcing them with sh.
func TestVMShareFiles(t *testing.T) {
	dir := t.TempDir()
	s := vmShare{dir: dir}
	cfg := vmShareConfig{
		NodeName: "storage-vm", NodeIP: "10.250.0.2", PodSubnet: "10.244.217.0/24",
		SandboxImage: "switchyard.local/lab/pause:1", ServiceIP: "10.96.0.1", APIServer: "10.0.2.100:6443",
		Labels:      map[string]string{ZoneLabel: "vm", VMNodeLabel: "true"},
		Images:      []string{"00-pause.tar", "01-busybox.tar"},
		ImageStore:  VMStoreLabel,
		KubeletArgs: KubeletArgs(vmGuestNodeDir, "storage-vm", "10.250.0.2"),
		Simulators: []vmSimulatorCommand{vmSimulatorCmd(VMSimulator{Kind: SimZFSSSH, Name: "zfs", HostPort: 17022,
			Args: []string{"--password", `it's secret`}})},
	}
	if err := s.writeGuestFiles(cfg); err != nil {
		t.Fatal(err)
	}
	read := func(p ...string) string {
		b, err := os.ReadFile(s.path(p...))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read("run.sh"); got != vmNodeScript {
		t.Error("run.sh is not vm-node.sh")
	}
	toml := read("node", "containerd.toml")
	for _, want := range []string{`sandbox_image = "switchyard.local/lab/pause:1"`, "SystemdCgroup = false", `bin_dir = "/usr/lib/cni"`} {
		if !strings.Contains(toml, want) {
			t.Errorf("containerd.toml lacks %s", want)
		}
	}
	if cni := read("node", "cni.conflist"); !strings.Contains(cni, `"subnet": "10.244.217.0/24"`) {
		t.Errorf("cni.conflist: %s", cni)
	}
	out, err := exec.Command("sh", "-c", `. "$1"; printf '%s|%s|%s|%s|%s\n' "$NODE_NAME" "$IMAGES" "$IMAGE_STORE" "$SIMULATORS" "$KUBELET_ARGS"`, "sh", s.path("node", "node.env")).CombinedOutput()
	if err != nil {
		t.Fatalf("sourcing node.env: %v: %s", err, out)
	}
	want := "storage-vm|00-pause.tar 01-busybox.tar|lab-ctrd-store|zfs|--config=/lab/node/kubelet-config.yaml --kubeconfig=/lab/node/kubeconfig" +
		" --hostname-override=storage-vm --node-ip=10.250.0.2 --v=2 --node-labels=lab.switchyard.io/storage-vm=true,topology.kubernetes.io/zone=vm\n"
	if string(out) != want {
		t.Errorf("node.env gives\n%s\nwant\n%s", out, want)
	}
	// The simulator's script, with switchyard-lab replaced by echo.
	script := strings.Replace(read("node", "sim-zfs.sh"), "exec /lab/bin/switchyard-lab", "echo", 1)
	script = strings.Replace(script, "mkdir -p", "echo mkdir", 1)
	out, err = exec.Command("sh", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("sim-zfs.sh: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "zfs-ssh --state /var/lib/switchyard-sim/zfs --listen 0.0.0.0:17022 --kernel --password it's secret") {
		t.Errorf("sim-zfs.sh runs: %s", out)
	}
	if st, _ := os.Stat(s.path("node", "sim-zfs.sh")); st.Mode()&0o111 == 0 {
		t.Error("sim-zfs.sh is not executable")
	}
	if got := read("node", "mounts.sh"); got != vmMountsScript {
		t.Error("node/mounts.sh is not vm-mounts.sh")
	}
	if !strings.Contains(vmNodeScript, `/lab/node/mounts.sh /lab/mounts "$MOUNT_ROOT"`) {
		t.Error("vm-node.sh does not run mounts.sh on /lab/mounts and $MOUNT_ROOT")
	}
	if st, _ := os.Stat(s.path("node", "mounts.sh")); st.Mode()&0o111 == 0 {
		t.Error("mounts.sh is not executable")
	}
	if env := read("node", "node.env"); !strings.Contains(env, "MOUNT_ROOT="+VMShareMountRoot+"\n") {
		t.Errorf("node.env lacks MOUNT_ROOT:\n%s", env)
	}
	for _, d := range []string{"logs", "images", "bin", "mounts"} {
		if st, err := os.Stat(s.path(d)); err != nil || !st.IsDir() {
			t.Errorf("no %s directory", d)
		}
	}
}

// vmWaitKubelet follows the console log from where this run's output
// starts, and fails fast with the guest's reason or QEMU's exit.
func TestVMWaitKubelet(t *testing.T) {
	console := filepath.Join(t.TempDir(), "console.log")
	old := "LAB: kubelet-started uptime=1.0\n" // an earlier run's
	if err := os.WriteFile(console, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	from := int64(len(old))
	go func() {
		time.Sleep(300 * time.Millisecond)
		f, _ := os.OpenFile(console, os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString("LAB: base-ready uptime=3.5\r\nLAB: containerd-ready uptime=20.25\r\n")
		f.WriteString("LAB: images-imported uptime=30.5\r\nLAB: kubelet-started uptime=31.0\r\n")
		f.Close()
	}()
	ev, err := vmWaitKubelet(context.Background(), console, from, func() bool { return true }, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if ev != (VMNodeEvents{Boot: 3.5, ContainerdReady: 20.25, ImagesImported: 30.5, KubeletStarted: 31}) {
		t.Errorf("events %+v", ev)
	}

	failed := "LAB: base-ready uptime=3\nLAB: node-failed: importing 00-pause.tar (see logs/images.log) uptime=9\n"
	if err := os.WriteFile(console, []byte(failed), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = vmWaitKubelet(context.Background(), console, 0, func() bool { return true }, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "node-failed: importing 00-pause.tar") {
		t.Errorf("node-failed: %v", err)
	}
	if err := os.WriteFile(console, []byte("LAB: base-ready uptime=3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = vmWaitKubelet(context.Background(), console, 0, func() bool { return false }, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "QEMU exited") {
		t.Errorf("QEMU gone: %v", err)
	}
	_, err = vmWaitKubelet(context.Background(), console, 0, func() bool { return true }, 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not start within") {
		t.Errorf("timeout: %v", err)
	}
}

func TestReadVMNodeInfo(t *testing.T) {
	state := t.TempDir()
	if _, err := ReadVMNodeInfo(state, "storage-vm"); err == nil || !strings.Contains(err.Error(), "no storage VM node storage-vm") {
		t.Errorf("missing: %v", err)
	}
	dir := VMNodeDir(state, "storage-vm")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	v, err := NewVMNode(VMNodeOptions{Simulators: []VMSimulator{{Kind: SimZFSSSH, Name: "zfs", HostPort: 17022, Args: []string{"--password", "secret"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, vmInfoFile), []byte(`{"name":"storage-vm","nodeIP":"10.250.0.2","kubeletPort":17010,"simulators":{"zfs":{"kind":"zfs-ssh","addr":"127.0.0.1:17022"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := ReadVMNodeInfo(state, "storage-vm")
	if err != nil {
		t.Fatal(err)
	}
	if in.Simulators["zfs"] != v.Info().Simulators["zfs"] || in.KubeletPort != 17010 {
		t.Errorf("read %+v", in)
	}
}

// vm-host.sh, with a fake ip(8) and a fake QEMU: it puts the node IP on
// its veth, and on SIGTERM to its process group (the cluster's Stop) asks
// the guest to stop through the share, kills a guest that does not within
// GRACE, and removes the veth. A guest that stops by itself ends it too.
func TestVMHostScript(t *testing.T) {
	for _, tt := range []struct {
		name  string
		guest string // the fake QEMU's body; $share is the share
		term  bool
	}{
		{"guest honours the stop file", `while [ ! -e "$share/stop" ]; do sleep 0.05; done; echo guest-stopped >>"$share/calls"`, true},
		{"stuck guest is killed", `trap '' TERM; while :; do sleep 0.05; done`, true},
		{"guest powers off by itself", `sleep 0.3; exit 3`, false},
		// QEMU's TCG crashing in the BIOS is retried once...
		{"crash during boot is retried", `if [ ! -e "$share/crashed" ]; then touch "$share/crashed"; kill -SEGV $$; fi; sleep 0.3; exit 3`, false},
		// ...and only once.
		{"second crash ends it", `echo crash >>"$share/crashes"; kill -SEGV $$`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "bin")
			share := filepath.Join(dir, "share")
			for _, d := range []string{bin, share} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			calls := filepath.Join(share, "calls")
			files := map[string]string{
				filepath.Join(bin, "ip"):      "#!/bin/sh\necho \"ip $*\" >>" + vmShQuote(calls) + "\n",
				filepath.Join(bin, "qemu"):    "#!/bin/sh\nshare=$1\necho $$ >\"$share/qemu.pid\"\n" + tt.guest + "\n",
				filepath.Join(dir, "host.sh"): vmHostScript,
				filepath.Join(dir, "host.env"): vmHostEnv("10.250.0.9", "syvmtest", share, time.Second) +
					"PATH=" + vmShQuote(bin+":"+os.Getenv("PATH")) + "\n",
			}
			for p, body := range files {
				if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("/bin/sh", filepath.Join(dir, "host.sh"), filepath.Join(dir, "host.env"), filepath.Join(bin, "qemu"), share)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var qemuPid int
			for i := 0; i < 100 && qemuPid == 0; i++ {
				b, _ := os.ReadFile(filepath.Join(share, "qemu.pid"))
				qemuPid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				time.Sleep(20 * time.Millisecond)
			}
			if qemuPid == 0 {
				t.Fatalf("the fake QEMU did not start: %s", out.String())
			}
			start := time.Now()
			if tt.term {
				// As the cluster's stopProc does: the whole group.
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			var err error
			select {
			case err = <-waited:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-qemuPid, syscall.SIGKILL)
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-waited
				t.Fatalf("vm-host.sh did not end within 10 s (QEMU not killed?):\n%s", out.String())
			}
			took := time.Since(start)
			if took > 5*time.Second {
				t.Errorf("took %s", took)
			}
			if syscall.Kill(qemuPid, 0) == nil {
				_ = syscall.Kill(-qemuPid, syscall.SIGKILL)
				t.Errorf("the fake QEMU still runs after vm-host.sh ended")
			}
			b, _ := os.ReadFile(calls)
			got := string(b)
			for _, want := range []string{"ip link add syvmtest type veth peer name syvmtestp", "ip addr add 10.250.0.9/32 dev syvmtest",
				"ip route replace local 10.250.0.9 dev syvmtest table local proto kernel scope host src 127.0.0.1", "ip link set syvmtest up"} {
				if !strings.Contains(got, want) {
					t.Errorf("no %q in\n%s", want, got)
				}
			}
			if !strings.HasSuffix(strings.TrimSpace(got), "ip link del syvmtest") {
				t.Errorf("the veth is not removed at the end:\n%s", got)
			}
			_, stopErr := os.Stat(filepath.Join(share, "stop"))
			if tt.term != (stopErr == nil) {
				t.Errorf("stop file written: %v, want %v", stopErr == nil, tt.term)
			}
			if tt.name == "guest honours the stop file" && (!strings.Contains(got, "guest-stopped") || took > 900*time.Millisecond) {
				t.Errorf("the guest was not given the chance to stop (%s):\n%s", took, got)
			}
			var ee *exec.ExitError
			switch tt.name {
			case "guest powers off by itself", "crash during boot is retried":
				if !errors.As(err, &ee) || ee.ExitCode() != 3 {
					t.Errorf("exit: %v (want QEMU's 3)\n%s", err, out.String())
				}
			case "second crash ends it":
				if !errors.As(err, &ee) || ee.ExitCode() != 139 {
					t.Errorf("exit: %v (want QEMU's 139)\n%s", err, out.String())
				}
				if b, _ := os.ReadFile(filepath.Join(share, "crashes")); strings.Count(string(b), "crash") != 2 {
					t.Errorf("QEMU started %d times, want 2:\n%s", strings.Count(string(b), "crash"), out.String())
				}
			}
			if retried := strings.Contains(out.String(), "starting it again once"); retried != strings.Contains(tt.name, "crash") {
				t.Errorf("retried: %v\n%s", retried, out.String())
			}
		})
	}
}
