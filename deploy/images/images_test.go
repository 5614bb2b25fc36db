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
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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

func TestImages(t *testing.T) {
	testtier.Need(t, testtier.Container, os.Geteuid() == 0, "building images needs root")
	testtier.Need(t, testtier.Container, dockerAnswers(), "Docker does not answer: run scripts/ensure-docker.sh")
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "images.sh"))
	cmd.Env = append(os.Environ(), "VERSION=imagestest")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/images.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	dir := lines[len(lines)-1]
	if !strings.HasPrefix(dir, "/var/cache/switchyard-lab/images/") {
		t.Fatalf("images.sh printed %q as its last line, want the cache directory", dir)
	}

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
