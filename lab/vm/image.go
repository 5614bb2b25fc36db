package vm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/switchyard-csi/switchyard/lab/mounts"
)

// DefaultImageSize is the size of the root filesystem image. The file is
// sparse and booted with snapshot=on, so the room is free: guests use it
// for backing files of test targets (mkfs.xfs wants at least 300 MB).
const DefaultImageSize = 4 << 30

// Names of the files in an image directory.
const (
	diskFile      = "vm.img"
	initrdFile    = "boot.cpio.gz"
	kernelFile    = "vmlinuz" // the compressed kernel (bzImage)
	pvhKernelFile = "vmlinux" // or the uncompressed one, booted through PVH
	manifestFile  = "image.json"
)

// ImageOptions tune EnsureImage.
type ImageOptions struct {
	// CacheDir holds the images; default DefaultCacheDir().
	CacheDir string
	// Log receives the build's progress and its commands' output.
	Log io.Writer
	// ExtraPackages are installed besides Packages (part of the cache key).
	ExtraPackages []string
	// Mirror is the Debian mirror; default the host's (see hostMirror).
	Mirror string

	build func(ctx context.Context, p buildPlan) error // replaced by unit tests
}

// Image is a built, cached VM: never modified after the build (QEMU boots
// it with snapshot=on), so any number of VMs can boot it at once.
type Image struct {
	Dir           string // the image directory in the cache
	Disk          string // ext4 root filesystem image
	Initrd        string // busybox initramfs
	Kernel        string // /boot/vmlinuz-<KernelVersion>, uncompressed if it boots through PVH
	KernelVersion string
	Key           string        // hash of the build inputs
	Packages      []string      // installed with debootstrap
	Built         bool          // this call built it (false: reused from the cache)
	BuildTime     time.Duration // of this call's build, or as recorded by the build
}

// manifest is image.json: what was built and how long it took.
type manifest struct {
	Key           string   `json:"key"`
	KernelVersion string   `json:"kernelVersion"`
	Packages      []string `json:"packages"`
	Mirror        string   `json:"mirror"`
	BuildSeconds  float64  `json:"buildSeconds"`
	Builder       string   `json:"builder"`
}

// DefaultCacheDir is $SWITCHYARD_VM_CACHE, else /var/cache/switchyard-lab/vm.
func DefaultCacheDir() string {
	if d := os.Getenv("SWITCHYARD_VM_CACHE"); d != "" {
		return d
	}
	return "/var/cache/switchyard-lab/vm"
}

// imageInputs computes the cache key of the image options would build.
func imageInputs(o ImageOptions) (keyInputs, error) {
	kver, err := findKernel()
	if err != nil {
		return keyInputs{}, err
	}
	return keyInputs{
		Kernel:    kver,
		Packages:  append(append([]string(nil), Packages...), o.ExtraPackages...),
		InitFiles: []string{bootrdInit, labInit},
		Builder:   BuilderVersion,
		Prune:     prunedModuleDirs,
		BootRoots: bootRoots,
		SizeBytes: DefaultImageSize,
	}, nil
}

// cachedImageReady reports whether the default image is in cacheDir.
func cachedImageReady(cacheDir string) (bool, error) {
	in, err := imageInputs(ImageOptions{})
	if err != nil {
		return false, err
	}
	_, err = loadImage(filepath.Join(cacheDir, cacheKey(in)))
	return err == nil, err
}

// EnsureImage returns the cached image for the current inputs (kernel,
// packages, init scripts, builder), building it first when there is none.
// A build happens in a temporary directory renamed into place when
// complete, under a lock that concurrent callers wait for, so the cache
// never holds a half-built image. Building needs root.
func EnsureImage(ctx context.Context, o ImageOptions) (*Image, error) {
	if o.CacheDir == "" {
		o.CacheDir = DefaultCacheDir()
	}
	if o.Mirror == "" {
		o.Mirror = hostMirror()
	}
	if o.build == nil {
		o.build = buildImage
	}
	in, err := imageInputs(o)
	if err != nil {
		return nil, fmt.Errorf("vm image: %w", err)
	}
	key := cacheKey(in)
	dir := filepath.Join(o.CacheDir, key)
	if img, err := loadImage(dir); err == nil {
		markUsed(img)
		return img, nil
	}
	if err := os.MkdirAll(o.CacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("vm image cache: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(o.CacheDir, ".lock"), o.Log)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Another process may have built it while this one waited.
	if img, err := loadImage(dir); err == nil {
		markUsed(img)
		return img, nil
	}
	// Holding the lock, any build directory is a leftover of a killed build.
	if err := removeStaleBuilds(o.CacheDir); err != nil {
		return nil, err
	}
	tmp := filepath.Join(o.CacheDir, fmt.Sprintf(".build-%s-%d", key, os.Getpid()))
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("vm image: %w", err)
	}
	start := time.Now()
	plan := buildPlan{Dir: tmp, CacheDir: o.CacheDir, KernelVersion: in.Kernel, Packages: in.Packages, Mirror: o.Mirror, Log: o.Log}
	if plan.Log == nil {
		plan.Log = io.Discard
	}
	fmt.Fprintf(plan.Log, "vm: building image %s (kernel %s, mirror %s) in %s\n", key, in.Kernel, o.Mirror, tmp)
	if err := o.build(ctx, plan); err != nil {
		return nil, fmt.Errorf("vm image build failed: %w", cleanUpAfter(err, tmp))
	}
	took := time.Since(start)
	m := manifest{Key: key, KernelVersion: in.Kernel, Packages: in.Packages, Mirror: o.Mirror,
		BuildSeconds: took.Seconds(), Builder: BuilderVersion}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, manifestFile), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("vm image: %w", cleanUpAfter(err, tmp))
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("vm image: %w", cleanUpAfter(err, tmp))
	}
	img, err := loadImage(dir)
	if err != nil {
		return nil, err
	}
	img.Built, img.BuildTime = true, took
	fmt.Fprintf(plan.Log, "vm: image %s built in %s\n", dir, took.Round(time.Second))
	pruneUnused(o.CacheDir, key, unusedFor, plan.Log)
	return img, nil
}

// unusedFor is how long an image of other inputs stays in the cache after
// its last use: another checkout may still boot it.
const unusedFor = 7 * 24 * time.Hour

// markUsed records a use of img (its manifest's mtime) for pruneUnused.
// A cache that only root may write cannot be marked; that is fine.
func markUsed(img *Image) {
	now := time.Now()
	_ = os.Chtimes(filepath.Join(img.Dir, manifestFile), now, now)
}

// pruneUnused removes the images of other keys not used for maxAge. The
// caller holds the cache lock. A VM booting a removed image keeps running:
// QEMU holds its files open.
func pruneUnused(cacheDir, keep string, maxAge time.Duration, log io.Writer) {
	ents, err := os.ReadDir(cacheDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || e.Name() == keep {
			continue
		}
		dir := filepath.Join(cacheDir, e.Name())
		st, err := os.Stat(filepath.Join(dir, manifestFile))
		if err != nil || time.Since(st.ModTime()) < maxAge {
			continue // not an image (debs/), or recently used
		}
		if err := removeBuildDir(dir); err != nil {
			fmt.Fprintf(log, "vm: cannot prune unused image %s: %v\n", dir, err)
			continue
		}
		fmt.Fprintf(log, "vm: pruned image %s (unused since %s)\n", dir, st.ModTime().Format(time.DateOnly))
	}
}

// loadImage opens a complete image directory.
func loadImage(dir string) (*Image, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, manifestFile), err)
	}
	img := &Image{
		Dir: dir, Disk: filepath.Join(dir, diskFile), Initrd: filepath.Join(dir, initrdFile),
		Kernel: filepath.Join(dir, pvhKernelFile), KernelVersion: m.KernelVersion, Key: m.Key,
		Packages: m.Packages, BuildTime: time.Duration(m.BuildSeconds * float64(time.Second)),
	}
	if _, err := os.Stat(img.Kernel); err != nil {
		img.Kernel = filepath.Join(dir, kernelFile)
	}
	for _, f := range []string{img.Disk, img.Initrd, img.Kernel} {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("image %s is incomplete: %w", dir, err)
		}
	}
	return img, nil
}

// DiskUsage is the space the image takes on the host (its files are
// sparse, so this is less than their sizes).
func (img *Image) DiskUsage() int64 {
	var n int64
	for _, f := range []string{img.Disk, img.Initrd, img.Kernel} {
		if st, err := os.Stat(f); err == nil {
			if s, ok := st.Sys().(*syscall.Stat_t); ok {
				n += s.Blocks * 512
			} else {
				n += st.Size()
			}
		}
	}
	return n
}

// removeStaleBuilds deletes the build directories of killed builds.
func removeStaleBuilds(cacheDir string) error {
	ents, err := os.ReadDir(cacheDir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), ".build-") {
			if err := removeBuildDir(filepath.Join(cacheDir, e.Name())); err != nil {
				return fmt.Errorf("removing a stale build: %w", err)
			}
		}
	}
	return nil
}

// cleanUpAfter removes the build directory tmp after err, adding a failure
// to remove it to err.
func cleanUpAfter(err error, tmp string) error {
	if rmErr := removeBuildDir(tmp); rmErr != nil {
		return fmt.Errorf("%w (and cleaning up: %v)", err, rmErr)
	}
	return err
}

// removeBuildDir deletes a build directory after unmounting what a killed
// debootstrap may have left mounted in its chroot (proc, sys): removing
// files through such a mount would reach the host's.
func removeBuildDir(dir string) error {
	if err := unmountUnder(dir); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// unmountUnder detaches every mount at or below dir, deepest first, and
// fails if any stays.
func unmountUnder(dir string) error {
	points, err := mounts.Under(dir)
	if err != nil {
		return err
	}
	for i := len(points) - 1; i >= 0; i-- {
		_ = syscall.Unmount(points[i], syscall.MNT_DETACH)
	}
	if left, _ := mounts.Under(dir); len(left) > 0 {
		return fmt.Errorf("cannot unmount %s; not removing %s", strings.Join(left, ", "), dir)
	}
	return nil
}
