// Package images_test builds the images with scripts/images.sh and checks
// what they are for: the controller image small and runnable as nonroot, the
// node image with every tool the attachers call, the lab's pause and busybox
// images, and a lab-values.yaml naming exactly the built images.
//
// Tier "container": it needs root and a Docker engine that already answers
// (scripts/ensure-docker.sh starts one; the test does not, so it never leaves
// a daemon behind). A cold run takes minutes (debootstrap); a warm one seconds.
package images_test

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/switchyard-csi/switchyard/lab/testtier"
)

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func dockerAnswers() bool {
	return exec.Command("docker", "info").Run() == nil
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// build runs scripts/images.sh once for the package's tests and returns the
// directory it printed.
func build(t *testing.T) string {
	t.Helper()
	testtier.Need(t, testtier.Container, os.Geteuid() == 0, "building images needs root")
	testtier.Need(t, testtier.Container, dockerAnswers(), "Docker does not answer: run scripts/ensure-docker.sh")
	buildOnce.Do(func() {
		root, err := filepath.Abs("../..")
		if err != nil {
			buildErr = err
			return
		}
		cmd := exec.Command(filepath.Join(root, "scripts", "images.sh"))
		cmd.Env = append(os.Environ(), "VERSION=imagestest")
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			buildErr = fmt.Errorf("scripts/images.sh: %w", err)
			return
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		buildDir = lines[len(lines)-1]
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	if !strings.HasPrefix(buildDir, "/var/cache/switchyard-lab/images/") {
		t.Fatalf("images.sh printed %q as its last line, want the cache directory", buildDir)
	}
	return buildDir
}

func TestImages(t *testing.T) {
	dir := build(t)

	refs := map[string]string{} // tarball -> reference
	f, err := os.Open(filepath.Join(dir, "images.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			t.Fatalf("images.txt line %q: want <tarball> <reference>", sc.Text())
		}
		if fi, err := os.Stat(filepath.Join(dir, fields[0])); err != nil || fi.Size() == 0 {
			t.Errorf("tarball %s: %v", fields[0], err)
		}
		refs[fields[0]] = fields[1]
	}
	want := map[string]string{
		"controller.tar": "switchyard-controller:imagestest",
		"node.tar":       "switchyard-node:imagestest",
		"pause.tar":      "registry.k8s.io/pause:3.10",
		"busybox.tar":    "switchyard-lab/busybox:1",
	}
	// Without upstream binaries for them, the lab's stand-ins (deploy/labsidecars) take their place.
	for _, s := range []string{"csi-node-driver-registrar", "livenessprobe"} {
		if r := refs[s+".tar"]; r != "switchyard-lab/"+s+":imagestest" && !strings.HasPrefix(r, "registry.k8s.io/sig-storage/"+s+":v") {
			t.Errorf("%s.tar holds %q, want the upstream image or switchyard-lab/%s:imagestest", s, r, s)
		}
	}
	for f, ref := range want {
		if refs[f] != ref {
			t.Errorf("%s holds %q, want %q", f, refs[f], ref)
		}
	}

	size, err := strconv.Atoi(strings.TrimSpace(run(t, "docker", "image", "inspect", "-f", "{{.Size}}", want["controller.tar"])))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("controller image: %.1f MB", float64(size)/1e6)
	if size >= 40e6 {
		t.Errorf("controller image is %d bytes; it must stay under 40 MB", size)
	}

	dr := func(args ...string) string {
		return run(t, "docker", append([]string{"run", "--rm", "--network", "host"}, args...)...)
	}
	if v := dr("--user", "65532:65532", want["controller.tar"], "--version"); !strings.Contains(v, "imagestest") {
		t.Errorf("controller --version as nonroot = %q", v)
	}
	tools := "nvme iscsiadm mount.nfs mount.cifs mkfs.ext4 mkfs.xfs resize2fs xfs_growfs blkid findmnt mount umount losetup"
	if out := dr("--entrypoint", "/bin/sh", want["node.tar"], "-c",
		"for c in "+tools+"; do command -v $c >/dev/null || echo missing $c; done; "+
			"test -e /etc/iscsi/initiatorname.iscsi && echo image carries an IQN; "+
			"test -e /etc/nvme/hostnqn && echo image carries a host NQN; switchyard --version"); strings.Contains(out, "missing") ||
		strings.Contains(out, "carries") || !strings.Contains(out, "imagestest") {
		t.Errorf("node image:\n%s", out)
	}
	if out := dr(want["busybox.tar"], "sh", "-c", "echo abc | sha256sum"); !strings.HasPrefix(out, "edeaaff3f1774ad2888673770c6d64097e391bc362d7d6fb34982ddf0efd18cb") {
		t.Errorf("busybox sha256sum = %q", out)
	}

	lv, err := os.ReadFile(filepath.Join(dir, "lab-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"imagePullPolicy: Never", "registry: switchyard-controller", "registry: switchyard-node", `tag: "imagestest"`} {
		if !strings.Contains(string(lv), s) {
			t.Errorf("lab-values.yaml lacks %q:\n%s", s, lv)
		}
	}
}

// TestNodePodInDocker runs the node pod's three containers as the chart
// renders them (switchyard --csi-mode=node, the registrar, the livenessprobe),
// sharing the socket directory as the pod's emptyDir/hostPath does: the
// registrar learns the driver's name and opens the kubelet registration
// socket, /healthz answers 200 while the driver serves and 500 once it is
// gone, and SIGTERM removes the registration socket.
func TestNodePodInDocker(t *testing.T) {
	build(t)
	d := t.TempDir()
	for _, sub := range []string{"csi", "reg", "config", "state"} {
		if err := os.Mkdir(filepath.Join(d, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(d, "config", "driver-config-file.yaml"), []byte("driver: proxy\nproxy:\n  configFolder: /mnt/connections\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	names := []string{"sy-imagestest-node", "sy-imagestest-reg", "sy-imagestest-live"}
	cleanup := func() { _ = exec.Command("docker", append([]string{"rm", "-f"}, names...)...).Run() }
	cleanup()
	t.Cleanup(cleanup)
	const port = "19859"
	run(t, "docker", "run", "-d", "--name", names[0], "--network", "host", "-e", "CSI_NODE_ID=n1",
		"-v", d+"/csi:/csi-data", "-v", d+"/config:/config", "-v", d+"/state:/var/lib/switchyard/node",
		"switchyard-node:imagestest", "--csi-name=org.example.lab", "--driver-config-file=/config/driver-config-file.yaml",
		"--csi-mode=node", "--server-socket=/csi-data/csi.sock", "--node-state-dir=/var/lib/switchyard/node")
	run(t, "docker", "run", "-d", "--name", names[1], "--network", "host", "-v", d+"/csi:/csi-data", "-v", d+"/reg:/registration",
		"switchyard-lab/csi-node-driver-registrar:imagestest", "--csi-address=/csi-data/csi.sock",
		"--kubelet-registration-path=/var/lib/kubelet/plugins/org.example.lab/csi.sock")
	run(t, "docker", "run", "-d", "--name", names[2], "--network", "host", "-v", d+"/csi:/csi-data",
		"switchyard-lab/livenessprobe:imagestest", "--csi-address=/csi-data/csi.sock", "--health-port="+port)

	regSock := filepath.Join(d, "reg", "org.example.lab-reg.sock")
	healthz := func() int {
		resp, err := http.Get("http://127.0.0.1:" + port + "/healthz")
		if err != nil {
			return 0
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := os.Stat(regSock)
		if err == nil && healthz() == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			logs, _ := exec.Command("docker", "logs", names[1]).CombinedOutput()
			t.Fatalf("after 30 s: registration socket %v, /healthz %d; registrar log:\n%s", err, healthz(), logs)
		}
		time.Sleep(200 * time.Millisecond)
	}

	run(t, "docker", "stop", "-t", "10", names[1])
	if _, err := os.Stat(regSock); err == nil {
		t.Error("the registrar left its registration socket behind after SIGTERM")
	}
	run(t, "docker", "stop", "-t", "10", names[0])
	if code := healthz(); code != http.StatusInternalServerError {
		t.Errorf("/healthz = %d with the driver stopped, want 500", code)
	}
}

// TestControllerPodInDocker runs the controller container exactly as the
// chart renders it (args, the main config and connections from the chart's
// Secrets, the chart's non-root user) with a read-only root filesystem and
// only /tmp writable: the driver starts, `switchyard config check` accepts
// the rendered files, and the livenessprobe reports it healthy.
func TestControllerPodInDocker(t *testing.T) {
	build(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	helm := filepath.Join(root, "bin", "tools", "helm")
	testtier.Need(t, testtier.Container, isExec(helm), "no bin/tools/helm: run scripts/ensure-helm.sh")
	out := run(t, helm, "template", "sy", filepath.Join(root, "deploy", "charts", "switchyard"), "--kube-version", "v1.37.0",
		"-f", filepath.Join(root, "deploy", "charts", "switchyard", "testdata", "values", "lab.yaml"),
		"--set", "controller.driver.image.tag=imagestest")

	var args []string
	var user int
	files := map[string]map[string]string{} // Secret name suffix -> file -> content
	for _, doc := range strings.Split(out, "\n---\n") {
		var o struct {
			Kind     string
			Metadata struct{ Name string }
			Data     map[string]string `yaml:"stringData"`
			Spec     struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Name            string
							Image           string
							Args            []string
							SecurityContext struct {
								RunAsUser int `yaml:"runAsUser"`
							} `yaml:"securityContext"`
						}
					}
				}
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		switch {
		case o.Kind == "Secret":
			files[o.Metadata.Name] = o.Data
		case o.Kind == "Deployment":
			for _, c := range o.Spec.Template.Spec.Containers {
				if c.Name == "switchyard" {
					args, user = c.Args, c.SecurityContext.RunAsUser
					if c.Image != "switchyard-controller:imagestest" {
						t.Fatalf("controller image %q", c.Image)
					}
				}
			}
		}
	}
	if len(args) == 0 || user == 0 || files["sy-switchyard-driver-config"] == nil || files["sy-switchyard-connections"] == nil {
		t.Fatalf("rendered chart lacks the controller container, its user or its Secrets: args %v user %d secrets %v", args, user, len(files))
	}

	d := t.TempDir()
	dirs := map[string]map[string]string{"config": files["sy-switchyard-driver-config"], "connections": files["sy-switchyard-connections"], "csi": nil}
	for dir, content := range dirs {
		p := filepath.Join(d, dir)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, c := range content {
			if err := os.WriteFile(filepath.Join(p, f), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The pod's emptyDir is writable by the pod's user; the test's directory is root's.
	if err := os.Chmod(filepath.Join(d, "csi"), 0o777); err != nil {
		t.Fatal(err)
	}
	mounts := []string{"--network", "host", "--user", fmt.Sprintf("%d:%d", user, user), "--read-only", "--tmpfs", "/tmp",
		"-v", d + "/config:/config:ro", "-v", d + "/connections:/mnt/connections:ro", "-v", d + "/csi:/csi-data"}

	// Exit 0: every rendered file is a valid config (run fails the test otherwise, with the problems).
	run(t, "docker", append(append([]string{"run", "--rm"}, mounts...), "switchyard-controller:imagestest", "config", "check", "/config/driver-config-file.yaml")...)

	names := []string{"sy-imagestest-ctrl", "sy-imagestest-ctrl-live"}
	cleanup := func() { _ = exec.Command("docker", append([]string{"rm", "-f"}, names...)...).Run() }
	cleanup()
	t.Cleanup(cleanup)
	run(t, "docker", append(append(append([]string{"run", "-d", "--name", names[0], "-e", "CSI_NODE_ID=n1"}, mounts...), "switchyard-controller:imagestest"), args...)...)
	const port = "19860"
	run(t, "docker", "run", "-d", "--name", names[1], "--network", "host", "-v", d+"/csi:/csi-data",
		"switchyard-lab/livenessprobe:imagestest", "--csi-address=/csi-data/csi.sock", "--health-port="+port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://127.0.0.1:" + port + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			logs, _ := exec.Command("docker", "logs", names[0]).CombinedOutput()
			t.Fatalf("the controller is not healthy after 30 s (%v); its log:\n%s", err, logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
