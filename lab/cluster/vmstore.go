package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/switchyard-csi/switchyard/lab/vm"
)

// The storage VM node's image store: a disk whose filesystem is a
// containerd root with the node's images already imported, attached to
// the VM (as a throw-away snapshot, like its root disk) and mounted at
// /var/lib/containerd. Importing the images in the guest took 4.5 min
// under TCG (ctr hashes and unpacks hundreds of MB on an emulated CPU);
// the host does the same import natively in seconds, once per set of
// images, and keeps the disk by content key.
const (
	// VMStoreLabel is the store's filesystem label; vm-node.sh mounts it.
	VMStoreLabel = "lab-ctrd-store"
	// vmStoreCacheDir holds one store per key (images and containerd).
	vmStoreCacheDir = "/var/cache/switchyard-lab/vm-containerd"
	vmStoreFile     = "store.img"
)

// vmImageStore returns a store disk holding images (docker-archive
// tarballs, imported in this order), building it when the cache has none.
func vmImageStore(ctx context.Context, images []string) (string, error) {
	key, err := vmStoreKey(images)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(vmStoreCacheDir, key)
	disk := filepath.Join(dir, vmStoreFile)
	now := time.Now()
	if _, err := os.Stat(disk); err == nil {
		_ = os.Chtimes(dir, now, now) // last used: what pruning keeps
		return disk, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp := disk + ".tmp"
	if err := buildVMStore(ctx, tmp, images); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, disk); err != nil {
		return "", err
	}
	pruneVMStores(vmStoreCacheDir, vmStoresKept)
	return disk, nil
}

// vmStoresKept is how many stores the cache keeps. The switchyard images
// change with every commit, and with them the key: without pruning, each
// commit would leave a store of about 1.2 GB behind.
const vmStoresKept = 2

// pruneVMStores removes all but the keep most recently used stores in
// cache (one cluster runs per machine, so no other start is using them).
func pruneVMStores(cache string, keep int) {
	ents, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	type store struct {
		path string
		used time.Time
	}
	var stores []store
	for _, e := range ents {
		if info, err := e.Info(); err == nil && e.IsDir() {
			stores = append(stores, store{filepath.Join(cache, e.Name()), info.ModTime()})
		}
	}
	sort.Slice(stores, func(i, j int) bool { return stores[i].used.After(stores[j].used) })
	for i := keep; i < len(stores); i++ {
		_ = os.RemoveAll(stores[i].path)
	}
}

// vmStoreKey is the content key of a store: the images' bytes, their
// order, and the containerd that writes the store (its on-disk format is
// the guest's: both are Debian bookworm's containerd).
func vmStoreKey(images []string) (string, error) {
	h := sha256.New()
	ctrd, err := vm.LookTool("containerd")
	if err != nil {
		return "", err
	}
	out, err := exec.Command(ctrd, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("containerd --version: %w", err)
	}
	fmt.Fprintf(h, "store v1\n%s\n", strings.TrimSpace(string(out)))
	for _, img := range images {
		f, err := os.Open(img)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\n", filepath.Base(img))
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("%s: %w", img, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

// buildVMStore makes an ext4 image at disk, mounts it, runs a containerd
// of its own with the image as its root (no CRI plugin: nothing but the
// import), imports the images into namespace k8s.io as vm-node.sh would,
// and unmounts it.
func buildVMStore(ctx context.Context, disk string, images []string) (err error) {
	var size int64 = 512 << 20
	for _, img := range images {
		st, err := os.Stat(img)
		if err != nil {
			return err
		}
		size += 3 * st.Size() // the blobs, their unpacked snapshots, ext4's own
	}
	if err := os.WriteFile(disk, nil, 0o644); err != nil {
		return err
	}
	if err := os.Truncate(disk, size); err != nil {
		return err
	}
	if err := vmStoreRun(ctx, "mkfs.ext4", "-q", "-F", "-L", VMStoreLabel, disk); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "lab-vm-store-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	root := filepath.Join(work, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if err := vmStoreRun(ctx, "mount", "-o", "loop", disk, root); err != nil {
		return err
	}
	defer func() {
		if uerr := vmStoreRun(context.Background(), "umount", "-d", root); uerr != nil && err == nil {
			err = uerr
		}
	}()
	sock := filepath.Join(work, "containerd.sock")
	cfg := filepath.Join(work, "containerd.toml")
	conf := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = %q
[ttrpc]
  address = %q
[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, root, filepath.Join(work, "state"), sock, sock+".ttrpc", filepath.Join(work, "opt"))
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		return err
	}
	ctrd, err := vm.LookTool("containerd")
	if err != nil {
		return err
	}
	ctr, err := vm.LookTool("ctr")
	if err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(work, "containerd.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(ctrd, "--config", cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = withoutProxy(os.Environ())
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting containerd for the store: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		// Its exit status after SIGTERM says nothing about the store.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case werr := <-done:
			_ = werr
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			werr := <-done
			_ = werr
		}
	}()
	ready := false
	for i := 0; i < 100 && !ready; i++ {
		ready = exec.CommandContext(ctx, ctr, "-a", sock, "version").Run() == nil
		if !ready {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if !ready {
		log, _ := os.ReadFile(logf.Name())
		return fmt.Errorf("the store's containerd did not answer in 10 s:\n%s", vmLastLines(string(log), 15))
	}
	for _, img := range images {
		if err := vmStoreRun(ctx, ctr, "-a", sock, "-n", "k8s.io", "images", "import", img); err != nil {
			return fmt.Errorf("importing %s into the store: %w", img, err)
		}
	}
	return nil
}

// vmStoreRun runs a host program, its output in the error.
func vmStoreRun(ctx context.Context, name string, args ...string) error {
	path, err := vm.LookTool(name)
	if err != nil {
		path = name
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = withoutProxy(os.Environ())
	out, err := cmd.CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
