package containers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/switchyard-csi/switchyard/lab/containers"
	"github.com/switchyard-csi/switchyard/lab/testtier"
)

// Ports of the ship range (31000-31999) for this package's simulators.
const (
	truenasAddr = "127.0.0.1:31101"
	infiniaAddr = "127.0.0.1:31102"
	zfsAddr     = "127.0.0.1:31103"
	targetAddr  = "127.0.0.1:31104"
)

var (
	imageOnce sync.Once
	imageRef  string
	imageErr  error
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// needDocker skips (or fails, under LAB_REQUIRE=container) without an
// engine; the test never starts one (scripts/ensure-docker.sh does, in
// make deps), so it never leaves a daemon behind.
func needDocker(t *testing.T) {
	t.Helper()
	out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput()
	testtier.Need(t, testtier.Container, err == nil,
		"Docker does not answer (run scripts/ensure-docker.sh as root): "+strings.TrimSpace(string(out)))
}

// image builds the simulators' image once for the package's tests.
func image(t *testing.T) string {
	t.Helper()
	needDocker(t)
	imageOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		start := time.Now()
		imageRef, imageErr = containers.BuildImage(ctx, repoRoot(t))
		t.Logf("image %s ready in %v", imageRef, time.Since(start).Round(time.Millisecond))
	})
	if imageErr != nil {
		t.Fatal(imageErr)
	}
	return imageRef
}

// start runs spec and removes the container when the test ends.
func start(t *testing.T, spec containers.Spec) *containers.Sim {
	t.Helper()
	ref := image(t)
	if spec.StateDir == "" {
		spec.StateDir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t0 := time.Now()
	s, err := containers.Start(ctx, ref, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s container up and answering in %v", spec.Command, time.Since(t0).Round(time.Millisecond))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if t.Failed() {
			t.Logf("%s output:\n%s", spec.Command, s.Logs(ctx))
		}
		if err := s.Terminate(ctx); err != nil {
			t.Errorf("removing the %s container: %v", spec.Command, err)
		}
	})
	return s
}

// TestTrueNAS: the TrueNAS simulator in a container answers system.info
// over REST (the route TrueNAS drivers call first) with the host name it
// was given, and refuses a wrong password.
func TestTrueNAS(t *testing.T) {
	start(t, containers.Spec{
		Command: "truenas", Args: []string{"--listen", truenasAddr, "--version", "25.10", "--hostname", "tc-truenas"},
		Addr: truenasAddr, Ready: "REST ",
	})
	get := func(user, pass string) (int, []byte) {
		req, err := http.NewRequest(http.MethodGet, "http://"+truenasAddr+"/api/v2.0/system/info", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(user, pass)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	code, body := get("root", "secret")
	if code != http.StatusOK {
		t.Fatalf("system.info: HTTP %d: %s", code, body)
	}
	var info struct {
		Hostname string `json:"hostname"`
		Version  string `json:"version"`
	}
	if err := json.Unmarshal(body, &info); err != nil {
		t.Fatalf("system.info answer %s: %v", body, err)
	}
	if info.Hostname != "tc-truenas" || !strings.HasPrefix(info.Version, "TrueNAS") {
		t.Errorf("system.info = %+v, want hostname tc-truenas and a TrueNAS version", info)
	}
	if code, _ := get("root", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("a wrong password got HTTP %d, want 401", code)
	}
}

// TestInfinia: the Infinia simulator in a container logs the CSI account
// in (GET /redapi/v1/auth_user gives a JWT) and refuses a wrong password.
func TestInfinia(t *testing.T) {
	start(t, containers.Spec{
		Command: "infinia", Args: []string{"--listen", infiniaAddr, "--plain"},
		Addr: infiniaAddr, Ready: "infinia REST API",
	})
	login := func(password string) (int, []byte) {
		req, err := http.NewRequest(http.MethodGet, "http://"+infiniaAddr+"/redapi/v1/auth_user", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("user_id", "csiAccount")
		req.Header.Set("password", password)
		req.Header.Set("level", "clu1/red")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	code, body := login("switchyard-lab")
	if code != http.StatusOK {
		t.Fatalf("login: HTTP %d: %s", code, body)
	}
	var tok struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || strings.Count(tok.Data.Token, ".") != 2 {
		t.Fatalf("login answer %s is not a JWT (err %v)", body, err)
	}
	if code, _ := login("wrong"); code != http.StatusUnauthorized {
		t.Errorf("a wrong password got HTTP %d, want 401", code)
	}
}

// hostKey is the SHA-256 fingerprint of the host key the zfs-ssh
// simulator printed at start ("host key <type> <fingerprint>").
func hostKey(t *testing.T, s *containers.Sim) string {
	t.Helper()
	for _, l := range strings.Split(s.Logs(context.Background()), "\n") {
		if f := strings.Fields(l); len(f) == 4 && f[0] == "host" && f[1] == "key" {
			return f[3]
		}
	}
	t.Fatalf("the simulator printed no host key")
	return ""
}

// sshRun runs cmd on addr as root with password, checking the server's host
// key against fingerprint, and returns its output.
func sshRun(t *testing.T, addr, fingerprint, password, cmd string) (string, error) {
	t.Helper()
	c, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{
		User: "root", Auth: []ssh.AuthMethod{ssh.Password(password)},
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			if got := ssh.FingerprintSHA256(key); got != fingerprint {
				return fmt.Errorf("host key %s, the simulator printed %s", got, fingerprint)
			}
			return nil
		},
		Timeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatalf("ssh %s: %v", addr, err)
	}
	defer func() { _ = c.Close() }()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	out, err := s.CombinedOutput(cmd)
	return string(out), err
}

// TestZFSSSH: the ZFS-over-SSH simulator in a container runs zfs over a
// real SSH session: a created volume is listed with its size, and the
// state survives a restart of the container on the same state directory.
func TestZFSSSH(t *testing.T) {
	state := t.TempDir()
	spec := containers.Spec{
		Command: "zfs-ssh", Args: []string{"--listen", zfsAddr, "--password", "tc-pass", "--nvmet-port", ""},
		Addr: zfsAddr, Ready: "zfs-ssh listening on", StateDir: state,
	}
	s := start(t, spec)
	fp := hostKey(t, s)
	if out, err := sshRun(t, zfsAddr, fp, "tc-pass", "zfs create -p -V 64M tank/k8s/tc-1"); err != nil {
		t.Fatalf("zfs create: %v: %s", err, out)
	}
	out, err := sshRun(t, zfsAddr, fp, "tc-pass", "zfs list -H -o name,volsize -t volume")
	if err != nil {
		t.Fatalf("zfs list: %v: %s", err, out)
	}
	if strings.TrimSpace(out) != "tank/k8s/tc-1\t64M" {
		t.Errorf("zfs list = %q, want the 64M volume tank/k8s/tc-1", out)
	}
	// A restart (the container is removed; the state directory stays).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	// The same state directory: the same host key, which sshRun checks.
	start(t, spec)
	out, err = sshRun(t, zfsAddr, fp, "tc-pass", "zfs list -H -o name -t volume")
	if err != nil || strings.TrimSpace(out) != "tank/k8s/tc-1" {
		t.Errorf("after a restart, zfs list = %q (%v), want tank/k8s/tc-1", out, err)
	}
}

// targetsReason is why the nvmet/LIO target containers cannot run on this
// machine, or "" when they can: they serve real targets through the host
// kernel's configfs, so the kernel needs configfs and the target modules.
func targetsReason() string {
	for _, p := range []string{"/sys/kernel/config/nvmet", "/sys/kernel/config/target"} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Sprintf("the host kernel has no %s (no configfs or no nvmet/LIO modules: modprobe nvmet target_core_mod; "+
				"these run on GitHub runners and laptops, and in the lab's storage VM, not on a kernel without modules)", p)
		}
	}
	return ""
}

// nodeImage is the newest switchyard-node image in Docker (make image):
// the target containers need its losetup, which a FROM-scratch image lacks.
func nodeImage() string {
	out, err := exec.Command("docker", "images", "switchyard-node", "--format", "{{.Repository}}:{{.Tag}}").Output()
	if err != nil {
		return ""
	}
	ref, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return ref
}

// TestNVMetTargetContainer: zfs-ssh --kernel in a container with the host's
// configfs and /dev serves a volume as a real NVMe-oF subsystem: the
// subsystem appears in the host's nvmet configfs, and goes when the share
// is removed. Docker's --privileged is replaced by its equivalent that
// works without CAP_SYS_RESOURCE (../shared/reference/lab-machine.md).
func TestNVMetTargetContainer(t *testing.T) {
	needDocker(t)
	reason := targetsReason()
	testtier.Need(t, testtier.ContainerTargets, reason == "", reason)
	node := nodeImage()
	testtier.Need(t, testtier.ContainerTargets, node != "", "no switchyard-node image in Docker: run make image first")
	bin := filepath.Join(t.TempDir(), "switchyard-lab")
	if err := containers.BuildBinary(context.Background(), repoRoot(t), bin); err != nil {
		t.Fatal(err)
	}
	tgt := start(t, containers.Spec{
		Image: node, Entrypoint: []string{"/usr/local/bin/switchyard-lab"}, Command: "zfs-ssh",
		Args: []string{"--listen", targetAddr, "--password", "tc-pass", "--kernel", "--nvmet-port", "1=tcp:127.0.0.1:31120"},
		Addr: targetAddr, Ready: "zfs-ssh listening on",
		HostConfig: privileged(bin),
	})
	fp := hostKey(t, tgt)
	nqn := "nqn.2003-01.org.linux-nvme:tc-1"
	if out, err := sshRun(t, targetAddr, fp, "tc-pass", "zfs create -p -V 64M tank/k8s/tc-1"); err != nil {
		t.Fatalf("zfs create: %v: %s", err, out)
	}
	script := "cd /subsystems\ncreate " + nqn + "\ncd " + nqn + "\nset attr allow_any_host=1\ncd namespaces\ncreate 1\ncd 1\n" +
		"set device path=/dev/zvol/tank/k8s/tc-1\nenable\ncd /ports/1/subsystems\ncreate " + nqn + "\n"
	if out, err := sshRun(t, targetAddr, fp, "tc-pass", "sh -c 'echo \""+script+"\" | nvmetcli'"); err != nil {
		t.Fatalf("nvmetcli: %v: %s", err, out)
	}
	sub := "/sys/kernel/config/nvmet/subsystems/" + nqn
	if _, err := os.Stat(sub); err != nil {
		t.Fatalf("the subsystem is not in the host's configfs: %v", err)
	}
	if out, err := sshRun(t, targetAddr, fp, "tc-pass", "sh -c 'echo \"cd /ports/1/subsystems\ndelete "+nqn+"\ncd /subsystems\ndelete "+nqn+"\" | nvmetcli'"); err != nil {
		t.Fatalf("nvmetcli delete: %v: %s", err, out)
	}
	if _, err := os.Stat(sub); !os.IsNotExist(err) {
		t.Errorf("the subsystem is still in the host's configfs after delete (stat: %v)", err)
	}
}
