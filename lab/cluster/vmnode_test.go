package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/switchyard-csi/switchyard/lab/testtier"
	"github.com/switchyard-csi/switchyard/lab/vm"
)

// TestVMNode starts the local control plane with the storage VM's node
// and a ZFS-over-SSH simulator inside the VM (--kernel), and checks what
// the e2e suite relies on: the node joins and is Ready with its zone
// label; a pod pinned to it runs; kubectl logs and exec reach its kubelet
// (the apiserver dials the node's InternalIP); the simulator's SSH port is
// reachable from the host; and a privileged pod on the node mounts, over
// NFS 4.2, a share the simulator exported through the VM's nfsd. Stop
// leaves no process and no network device behind.
func TestVMNode(t *testing.T) {
	ok, why := Available()
	testtier.Need(t, testtier.Cluster, ok, why)
	ok, why = vm.Available()
	testtier.Need(t, testtier.VM, ok, why)
	if testing.Short() {
		testtier.Need(t, testtier.VM, false, "-short (the node VM takes minutes)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()

	busybox := filepath.Join(t.TempDir(), "busybox.tar")
	if err := WriteBusyboxImage(busybox); err != nil {
		t.Fatal(err)
	}
	const password = "vmnode-test"
	v, err := NewVMNode(VMNodeOptions{Zone: "lab-vm", Simulators: []VMSimulator{
		{Kind: SimZFSSSH, Name: "zfs", Args: []string{"--user", "root", "--password", password}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	start := time.Now()
	c, err := StartLocal(ctx, Options{StateDir: t.TempDir(), NoHostNode: true, WaitForMachine: 20 * time.Minute, Images: []string{busybox},
		ExtraNodes: []NodeStarter{v}, Log: &log})
	t.Log("\n" + log.String())
	if c == nil && err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if t.Failed() {
			info, _ := ReadVMNodeInfo(c.StateDir(), v.NodeName())
			for _, f := range []string{"kubelet.log", "containerd.log", "sim-zfs.log"} {
				if info != nil {
					t.Logf("--- the end of the guest's %s:\n%s", f, tail(filepath.Join(info.Dir, "logs", f), 30))
				}
			}
			t.Logf("--- the end of the console:\n%s", tail(c.LogPath("vm-"+v.NodeName()), 40))
		}
		if !stopped {
			_ = c.Stop(context.Background())
		}
	}()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("control plane and the VM node Ready in %.1fs", time.Since(start).Seconds())

	testVMNodeWorks(ctx, t, c, v, password)

	if err := c.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	stopped = true
	if running := c.RunningProcesses(); len(running) > 0 {
		t.Errorf("still running after Stop: %v", running)
	}
	if _, err := os.Stat(fmt.Sprintf("/sys/class/net/syvm%d", DefaultVMKubeletPort)); err == nil {
		t.Errorf("the node's veth syvm%d is left behind", DefaultVMKubeletPort)
	}
}

// testVMNodeWorks checks the running VM node v of cluster c, whose
// simulator "zfs" has root's password password.
func testVMNodeWorks(ctx context.Context, t *testing.T, c *Local, v *VMNodeStarter, password string) {
	t.Run("labels", func(t *testing.T) {
		out, err := c.Kubectl(ctx, nil, "get", "node", v.NodeName(), "-o",
			`jsonpath={.metadata.labels.topology\.kubernetes\.io/zone} {.metadata.labels.lab\.switchyard\.io/storage-vm} {.status.addresses[?(@.type=="InternalIP")].address}`)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.TrimSpace(string(out)), "lab-vm true "+DefaultVMNodeIP; got != want {
			t.Errorf("zone label, VM label and InternalIP: %q, want %q", got, want)
		}
	})

	t.Run("pod, logs and exec", func(t *testing.T) {
		podStart := time.Now()
		vmApply(ctx, t, c, vmPod("vm-sleeper", v.NodeName(), false, "echo hello-from-the-vm; exec /bin/busybox sleep 3600"))
		if _, err := c.Kubectl(ctx, nil, "wait", "--for=condition=Ready", "pod/vm-sleeper", "--timeout=180s"); err != nil {
			desc, _ := c.Kubectl(ctx, nil, "describe", "pod", "vm-sleeper")
			t.Fatalf("%v\n%s", err, desc)
		}
		t.Logf("pod Running on the VM node %.1fs after it was created", time.Since(podStart).Seconds())
		out, err := c.Kubectl(ctx, nil, "logs", "vm-sleeper")
		if err != nil || !strings.Contains(string(out), "hello-from-the-vm") {
			t.Errorf("kubectl logs through the node's kubelet: %q, %v", out, err)
		}
		out, err = c.Kubectl(ctx, nil, "exec", "vm-sleeper", "--", "/bin/busybox", "uname", "-n")
		if err != nil || strings.TrimSpace(string(out)) != "vm-sleeper" {
			t.Errorf("kubectl exec: %q, %v (want the pod's host name)", out, err)
		}
	})

	t.Run("privileged pod mounts the simulator's NFS export", func(t *testing.T) {
		addr := v.Info().Simulators["zfs"].Addr
		mp := vmSSH(t, addr, password, "zfs create -o sharenfs=rw,no_root_squash tank/vmnode && zfs get -H -o value mountpoint tank/vmnode")
		mp = strings.TrimSpace(mp)
		if !strings.HasPrefix(mp, "/") {
			t.Fatalf("mountpoint %q", mp)
		}
		script := fmt.Sprintf(`set -ex
/bin/busybox mkdir -p /mnt/nfs
/bin/busybox mount -t nfs4 -o vers=4.2,addr=127.0.0.1 127.0.0.1:%s /mnt/nfs
echo written-over-nfs > /mnt/nfs/marker
/bin/busybox umount /mnt/nfs
/bin/busybox mount -t nfs4 -o vers=4.2,addr=127.0.0.1 127.0.0.1:%s /mnt/nfs
echo "read back: $(/bin/busybox cat /mnt/nfs/marker)"
/bin/busybox grep " /mnt/nfs " /proc/mounts
/bin/busybox umount /mnt/nfs
`, mp, mp)
		podStart := time.Now()
		vmApply(ctx, t, c, vmPod("vm-nfs", v.NodeName(), true, script))
		phase := vmWaitPodDone(ctx, t, c, "vm-nfs", 3*time.Minute)
		out, _ := c.Kubectl(ctx, nil, "logs", "vm-nfs")
		if phase != "Succeeded" {
			desc, _ := c.Kubectl(ctx, nil, "describe", "pod", "vm-nfs")
			t.Fatalf("the NFS pod ended %s; its log:\n%s\n%s", phase, out, desc)
		}
		t.Logf("NFS pod done %.1fs after it was created:\n%s", time.Since(podStart).Seconds(), out)
		if !strings.Contains(string(out), "read back: written-over-nfs") || !strings.Contains(string(out), "nfs4") {
			t.Errorf("the pod did not read its data back over NFS 4: %s", out)
		}
		// The data is in the simulator's dataset: it reports it used.
		used := vmSSH(t, addr, password, "zfs get -H -p -o value written tank/vmnode")
		t.Logf("tank/vmnode written: %s", strings.TrimSpace(used))
	})

}

// vmPod is a busybox pod pinned to node, running script; privileged ones
// use the node's network (the simulators' targets listen on the VM's
// 127.0.0.1) and end when the script does.
func vmPod(name, node string, privileged bool, script string) string {
	restart, extra := "Always", ""
	if privileged {
		restart = "Never"
		extra = "\n  hostNetwork: true"
	}
	indented := "      " + strings.ReplaceAll(strings.TrimRight(script, "\n"), "\n", "\n      ")
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: default
spec:
  nodeSelector:
    kubernetes.io/hostname: %s
  terminationGracePeriodSeconds: 1
  restartPolicy: %s%s
  containers:
  - name: main
    image: %s
    imagePullPolicy: Never
    command:
    - /bin/busybox
    - sh
    - -c
    - |
%s
    securityContext:
      privileged: %t
`, name, node, restart, extra, BusyboxImageName, indented, privileged)
}

// vmApply creates a pod, retrying while the default service account does
// not exist yet (the controller manager makes it shortly after its start).
func vmApply(ctx context.Context, t *testing.T, c *Local, manifest string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := c.Kubectl(ctx, []byte(manifest), "apply", "-f", "-")
		if err == nil {
			return
		}
		if time.Now().After(deadline) || !strings.Contains(err.Error(), "serviceaccount") {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// vmWaitPodDone waits for a pod's phase to be Succeeded or Failed.
func vmWaitPodDone(ctx context.Context, t *testing.T, c *Local, name string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out, err := c.Kubectl(ctx, nil, "get", "pod", name, "-o", "jsonpath={.status.phase}")
		phase := strings.TrimSpace(string(out))
		if err == nil && (phase == "Succeeded" || phase == "Failed") {
			return phase
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("%s (still, after %s)", phase, timeout)
		}
		time.Sleep(time.Second)
	}
}

// vmSSH runs a command on the ZFS-over-SSH simulator.
func vmSSH(t *testing.T, addr, password, command string) string {
	t.Helper()
	client, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{
		User: "root", Auth: []ssh.AuthMethod{ssh.Password(password)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), // the test's own simulator, made a moment ago
		Timeout:         30 * time.Second,
	})
	if err != nil {
		t.Fatalf("ssh to the simulator in the VM at %s: %v", addr, err)
	}
	defer client.Close()
	s, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out, stderr bytes.Buffer
	s.Stdout, s.Stderr = &out, &stderr
	if err := s.Run(command); err != nil {
		t.Fatalf("%s: %v: %s", command, err, stderr.String())
	}
	return out.String()
}
