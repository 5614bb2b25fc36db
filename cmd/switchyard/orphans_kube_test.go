package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

// fakeKubectl stands for the user's kubectl: it logs its arguments and
// prints $FAKE_KUBECTL_DIR/<pv|vsc>.json, or fails with <pv|vsc>.err on
// stderr (exit 1), as kubectl does.
const fakeKubectl = `#!/bin/sh
printf '%s\n' "$*" >> "$FAKE_KUBECTL_DIR/argv"
case "$*" in
*" get persistentvolumes -o json") f=pv ;;
*" get volumesnapshotcontents.snapshot.storage.k8s.io -o json") f=vsc ;;
*) echo "fake kubectl: unexpected arguments: $*" >&2; exit 2 ;;
esac
if [ -f "$FAKE_KUBECTL_DIR/$f.err" ]; then cat "$FAKE_KUBECTL_DIR/$f.err" >&2; exit 1; fi
cat "$FAKE_KUBECTL_DIR/$f.json"
`

const testDriver = "org.test.switchyard"

// kubeRig is an orphanRig plus a fake kubectl in PATH.
type kubeRig struct {
	*orphanRig
	fake, kubeconfig string
}

func newKubeRig(t *testing.T) *kubeRig {
	t.Helper()
	r := &kubeRig{orphanRig: newOrphanRig(t, "zfs")}
	bin := filepath.Join(r.dir, "bin")
	r.fake = filepath.Join(r.dir, "kube")
	for _, d := range []string{bin, r.fake} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(fakeKubectl), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_KUBECTL_DIR", r.fake)
	r.kubeconfig = filepath.Join(r.dir, "kubeconfig")
	r.write(t, r.kubeconfig, "# read by kubectl only\n")
	return r
}

// cluster sets what the fake kubectl answers: PVs as (driver, handle)
// pairs, VolumeSnapshotContents as JSON items.
func (r *kubeRig) cluster(t *testing.T, pvs [][2]string, vscItems ...string) {
	t.Helper()
	var items []string
	for i, pv := range pvs {
		items = append(items, fmt.Sprintf(`{"kind":"PersistentVolume","metadata":{"name":"pv-%d"},"spec":{"csi":{"driver":%q,"volumeHandle":%q}}}`, i, pv[0], pv[1]))
	}
	// A PV of an in-tree plugin has no spec.csi.
	items = append(items, `{"kind":"PersistentVolume","metadata":{"name":"pv-hostpath"},"spec":{"hostPath":{"path":"/data"}}}`)
	r.write(t, filepath.Join(r.fake, "pv.json"), `{"apiVersion":"v1","kind":"List","items":[`+strings.Join(items, ",")+`]}`)
	r.write(t, filepath.Join(r.fake, "vsc.json"), `{"apiVersion":"v1","kind":"List","items":[`+strings.Join(vscItems, ",")+`]}`)
}

func vscReady(name, driver, handle string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"driver":%q,"source":{"volumeHandle":"v:zfs/x"}},"status":{"readyToUse":true,"snapshotHandle":%q}}`, name, driver, handle)
}

func (r *kubeRig) run(t *testing.T, extra ...string) (int, string, string) {
	t.Helper()
	args := append([]string{"--driver-config-file", r.main, "--kubeconfig", r.kubeconfig, "--csi-name", testDriver, "--timeout", "30s"}, extra...)
	var out, errb bytes.Buffer
	code := orphansCmd(args, &out, &errb)
	return code, out.String(), errb.String()
}

// --kubeconfig reads this driver's PVs and VolumeSnapshotContents with
// kubectl (argv, no shell; --context passed on) and reports as with a
// handles file: objects of other drivers do not count as known, a
// pre-provisioned content's source handle does.
func TestOrphansFromKubeconfig(t *testing.T) {
	r := newKubeRig(t)
	var known, orphan, otherDrivers, knownSnap, preSnap, orphanSnap string
	r.controller(t, func(c csipb.ControllerServer) {
		known = mkVolume(t, c, "zfs", "pvc-known")
		orphan = mkVolume(t, c, "zfs", "pvc-orphan")
		otherDrivers = mkVolume(t, c, "zfs", "pvc-other")
		knownSnap = mkSnapshot(t, c, known, "snap-known")
		preSnap = mkSnapshot(t, c, known, "snap-pre")
		orphanSnap = mkSnapshot(t, c, known, "snap-orphan")
	})
	r.cluster(t, [][2]string{{testDriver, known}, {testDriver, "v:zfs/pvc-gone"}, {"other.csi.example.com", otherDrivers}},
		vscReady("snapcontent-1", testDriver, knownSnap),
		fmt.Sprintf(`{"metadata":{"name":"pre"},"spec":{"driver":%q,"source":{"snapshotHandle":%q}}}`, testDriver, preSnap),
		vscReady("snapcontent-other", "other.csi.example.com", orphanSnap))

	code, out, errb := r.run(t, "--context", "lab")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	for _, want := range []string{
		"volumes on the backend with no PersistentVolume: 2\n  " + orphan + "\n  " + otherDrivers + "\n",
		"snapshots on the backend with no VolumeSnapshotContent: 1\n  " + orphanSnap + "\n",
		"whose volume is gone from the backend: 1\n  v:zfs/pvc-gone\n",
		"nothing was deleted",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	argv, err := os.ReadFile(filepath.Join(r.fake, "argv"))
	if err != nil {
		t.Fatal(err)
	}
	want := "--kubeconfig " + r.kubeconfig + " --context lab get persistentvolumes -o json\n" +
		"--kubeconfig " + r.kubeconfig + " --context lab get volumesnapshotcontents.snapshot.storage.k8s.io -o json\n"
	if string(argv) != want {
		t.Errorf("kubectl ran with\n%s\nwant\n%s", argv, want)
	}
	if n := strings.Count(datasets(t, r.hosts["zfs"], "zfs"), "pvc-"); n != 6 {
		t.Errorf("a read-only report changed the host:\n%s", datasets(t, r.hosts["zfs"], "zfs"))
	}
}

// --delete with the cluster's handles removes the orphans, and only them.
func TestOrphansDeleteFromKubeconfig(t *testing.T) {
	r := newKubeRig(t)
	var known, knownSnap string
	r.controller(t, func(c csipb.ControllerServer) {
		known = mkVolume(t, c, "zfs", "pvc-known")
		mkVolume(t, c, "zfs", "pvc-orphan")
		knownSnap = mkSnapshot(t, c, known, "snap-known")
		mkSnapshot(t, c, known, "snap-orphan")
	})
	r.cluster(t, [][2]string{{testDriver, known}}, vscReady("snapcontent-1", testDriver, knownSnap))
	code, out, errb := r.run(t, "--delete", "--yes")
	if code != 0 || !strings.Contains(out, "deleted 2 of 2") {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	left := datasets(t, r.hosts["zfs"], "zfs")
	for _, gone := range []string{"/pvc-orphan\n", "@snap-orphan\n"} {
		if strings.Contains(left, gone) {
			t.Errorf("%s was not deleted:\n%s", gone, left)
		}
	}
	for _, stays := range []string{"/pvc-known\n", "/pvc-known@snap-known\n"} {
		if !strings.Contains(left, stays) {
			t.Errorf("%s was deleted:\n%s", stays, left)
		}
	}
}

// What the cluster answers can make a report doubtful; --delete then
// deletes nothing and says why (the read-only report still prints).
func TestOrphansKubeconfigDoubts(t *testing.T) {
	for _, c := range []struct {
		name    string
		pvs     func(known string) [][2]string
		vsc     func(snap string) []string
		vscErr  string
		doubt   string
		orphans string
	}{
		{
			name: "a snapshot being cut",
			pvs:  func(known string) [][2]string { return [][2]string{{testDriver, known}} },
			vsc: func(string) []string {
				return []string{fmt.Sprintf(`{"metadata":{"name":"snapcontent-new"},"spec":{"driver":%q,"source":{"volumeHandle":"v:zfs/pvc-known"}}}`, testDriver)}
			},
			doubt: "VolumeSnapshotContent snapcontent-new of " + testDriver + " has no snapshot handle yet",
		},
		{
			name:  "another cluster, or another driver name",
			pvs:   func(string) [][2]string { return [][2]string{{"other.csi.example.com", "v:zfs/pvc-x"}} },
			vsc:   func(string) []string { return nil },
			doubt: "the cluster has no PersistentVolume or VolumeSnapshotContent of driver " + testDriver + ", yet the backends hold 1 of its volumes",
		},
		{
			name:   "no snapshot CRDs",
			pvs:    func(known string) [][2]string { return [][2]string{{testDriver, known}} },
			vscErr: `error: the server doesn't have a resource type "volumesnapshotcontents"`,
			doubt:  "the cluster has no VolumeSnapshotContent type (the snapshot CRDs are not installed), yet the backends hold 1 snapshots",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newKubeRig(t)
			var known, snap string
			r.controller(t, func(cs csipb.ControllerServer) {
				known = mkVolume(t, cs, "zfs", "pvc-known")
				snap = mkSnapshot(t, cs, known, "snap-1")
			})
			var vsc []string
			if c.vsc != nil {
				vsc = c.vsc(snap)
			}
			r.cluster(t, c.pvs(known), vsc...)
			if c.vscErr != "" {
				r.write(t, filepath.Join(r.fake, "vsc.err"), c.vscErr+"\n")
			}
			before := datasets(t, r.hosts["zfs"], "zfs")

			code, out, errb := r.run(t)
			if code != 0 || !strings.Contains(errb, c.doubt) || !strings.Contains(out, "read-only report") {
				t.Fatalf("report: exit %d, want 0 with the doubt %q\nstdout:\n%s\nstderr:\n%s", code, c.doubt, out, errb)
			}
			code, out, errb = r.run(t, "--delete", "--yes")
			if code != 1 || !strings.Contains(errb, c.doubt) || !strings.Contains(errb, "nothing was deleted") || strings.Contains(out, "deleted ") {
				t.Fatalf("--delete: exit %d, want 1 deleting nothing\nstdout:\n%s\nstderr:\n%s", code, out, errb)
			}
			if after := datasets(t, r.hosts["zfs"], "zfs"); after != before {
				t.Fatalf("the host changed:\n%s\nwas\n%s", after, before)
			}
		})
	}
}

// kubectl missing or failing: no report, exit 1, an error that names
// kubectl and what to do; nothing is touched.
func TestOrphansKubectlProblems(t *testing.T) {
	r := newKubeRig(t)
	r.controller(t, func(c csipb.ControllerServer) { mkVolume(t, c, "zfs", "pvc-orphan") })
	r.cluster(t, nil)
	for _, c := range []struct {
		name  string
		setup func(t *testing.T)
		extra []string
		want  []string
	}{
		{"not installed", func(t *testing.T) { t.Setenv("PATH", t.TempDir()) }, nil,
			[]string{`--kubeconfig reads the cluster with kubectl, and "kubectl" was not found`, "--handles", "no report"}},
		{"another program named", nil, []string{"--kubectl", "/nonexistent/kubectl"},
			[]string{`"/nonexistent/kubectl" was not found`}},
		{"the cluster does not answer", func(t *testing.T) {
			r.write(t, filepath.Join(r.fake, "pv.err"), "E1126 12:00:00.000000 memcache.go:265] couldn't get current server API group list: Get \"https://127.0.0.1:6443/api\": dial tcp 127.0.0.1:6443: connect: connection refused\nThe connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?\n")
			t.Cleanup(func() { os.Remove(filepath.Join(r.fake, "pv.err")) })
		}, nil, []string{"kubectl --kubeconfig " + r.kubeconfig + " get persistentvolumes -o json failed (exit status 1)", "The connection to the server 127.0.0.1:6443 was refused", "no report"}},
		{"not JSON", func(t *testing.T) {
			r.write(t, filepath.Join(r.fake, "pv.json"), "NAME CAPACITY\n")
		}, nil, []string{"kubectl get persistentvolumes -o json printed something that is not a list"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.setup != nil {
				c.setup(t)
			}
			code, out, errb := r.run(t, append(c.extra, "--delete", "--yes")...)
			if code != 1 || out != "" {
				t.Fatalf("exit %d, stdout %q; want 1 and no report\nstderr:\n%s", code, out, errb)
			}
			for _, w := range c.want {
				if !strings.Contains(errb, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errb)
				}
			}
			if !strings.Contains(datasets(t, r.hosts["zfs"], "zfs"), "/pvc-orphan\n") {
				t.Fatal("the orphan was deleted")
			}
		})
	}
}

func TestOrphansKubeconfigUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--driver-config-file", "m.yaml", "--kubeconfig", "k", "--handles", "h"}, "usage:"},
		{[]string{"--driver-config-file", "m.yaml", "--kubeconfig", "k"}, "--kubeconfig needs --csi-name"},
		{[]string{"--driver-config-file", "m.yaml", "--handles", "h", "--context", "lab"}, "--context needs --kubeconfig"},
	} {
		var out, errb bytes.Buffer
		if code := orphansCmd(c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d: %s", c.args, code, errb.String())
		}
	}
	// --help shows the two ways to give the handles.
	var out, errb bytes.Buffer
	if code := orphansCmd([]string{"--help"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--kubeconfig <file> [--context <name>]") || !strings.Contains(errb.String(), "-kubectl") {
		t.Errorf("--help: exit %d: %s", code, errb.String())
	}
}
