package cluster

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/lab/testtier"
)

// The store the host builds is a containerd root in which the images are
// imported and unpacked: a second containerd started on it (as the
// guest's is) lists the image without importing anything.
func TestBuildVMStore(t *testing.T) {
	ok, why := Available()
	testtier.Need(t, testtier.Cluster, ok, why)
	dir := t.TempDir()
	tar := filepath.Join(dir, "one.tar")
	var b bytes.Buffer
	if err := WriteImageTar(&b, "switchyard.local/lab/store-test:1", []ImageFile{{Path: "/hello", Mode: 0o644, Data: []byte("store")}}, []string{"/hello"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tar, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	disk := filepath.Join(dir, "store.img")
	if err := buildVMStore(ctx, disk, []string{tar}); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("blkid", "-o", "value", "-s", "LABEL", disk).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != VMStoreLabel {
		t.Fatalf("the store's label: %q, %v; want %s", out, err, VMStoreLabel)
	}
	// Mounted again, it is a root that containerd serves the image from.
	root := filepath.Join(dir, "mnt")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vmStoreRun(ctx, "mount", "-o", "loop,ro", disk, root); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := vmStoreRun(context.Background(), "umount", "-d", root); err != nil {
			t.Error(err)
		}
	}()
	snaps, err := filepath.Glob(filepath.Join(root, "io.containerd.snapshotter.v1.overlayfs", "snapshots", "*", "fs", "hello"))
	if err != nil || len(snaps) != 1 {
		t.Fatalf("the image's layer is not unpacked in the store's overlayfs snapshots: %v %v", snaps, err)
	}
	if data, err := os.ReadFile(snaps[0]); err != nil || string(data) != "store" {
		t.Errorf("the unpacked file holds %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(root, "io.containerd.metadata.v1.bolt", "meta.db")); err != nil {
		t.Errorf("no containerd metadata in the store: %v", err)
	}
}

// The key changes with an image's bytes and with the order of the images.
func TestVMStoreKey(t *testing.T) {
	ok, why := Available()
	testtier.Need(t, testtier.Cluster, ok, why)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(a, "one")
	write(b, "two")
	key := func(images ...string) string {
		k, err := vmStoreKey(images)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	ab := key(a, b)
	if key(a, b) != ab {
		t.Error("the key is not stable")
	}
	if key(b, a) == ab {
		t.Error("the key ignores the order")
	}
	write(b, "three")
	if key(a, b) == ab {
		t.Error("the key ignores the content")
	}
}

// Pruning keeps the most recently used stores and removes the others.
func TestPruneVMStores(t *testing.T) {
	cache := t.TempDir()
	base := time.Now().Add(-time.Hour)
	for i, name := range []string{"old", "newest", "middle"} {
		d := filepath.Join(cache, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		at := base.Add(time.Duration([]int{0, 30, 10}[i]) * time.Minute)
		if err := os.Chtimes(d, at, at); err != nil {
			t.Fatal(err)
		}
	}
	pruneVMStores(cache, 2)
	var left []string
	ents, _ := os.ReadDir(cache)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if strings.Join(left, ",") != "middle,newest" {
		t.Errorf("left %v, want middle and newest", left)
	}
}
