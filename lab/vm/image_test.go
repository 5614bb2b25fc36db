package vm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stubBuild writes the image files instantly after a pause, counting calls.
func stubBuild(calls *atomic.Int32, pause time.Duration) func(context.Context, buildPlan) error {
	return func(ctx context.Context, p buildPlan) error {
		calls.Add(1)
		time.Sleep(pause)
		for _, f := range []string{diskFile, initrdFile, pvhKernelFile} {
			if err := os.WriteFile(filepath.Join(p.Dir, f), []byte(f), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestEnsureImageBuildsOnceForConcurrentCallers(t *testing.T) {
	fakeKernels(t, []string{"6.1.0-56-amd64"}, []string{"6.1.0-56-amd64"})
	cache := t.TempDir()
	var calls atomic.Int32
	var wg sync.WaitGroup
	imgs := make([]*Image, 4)
	errs := make([]error, 4)
	for i := range imgs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			imgs[i], errs[i] = EnsureImage(context.Background(), ImageOptions{CacheDir: cache, Mirror: "http://m.example/debian", build: stubBuild(&calls, 300*time.Millisecond)})
		}(i)
	}
	wg.Wait()
	built := 0
	for i := range imgs {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if imgs[i].Dir != imgs[0].Dir {
			t.Errorf("caller %d got %s, caller 0 %s", i, imgs[i].Dir, imgs[0].Dir)
		}
		if imgs[i].Built {
			built++
		}
	}
	if calls.Load() != 1 || built != 1 {
		t.Errorf("%d builds, %d callers saw Built; want 1 and 1", calls.Load(), built)
	}
	img := imgs[0]
	if img.KernelVersion != "6.1.0-56-amd64" || filepath.Base(img.Kernel) != pvhKernelFile || !strings.HasPrefix(img.Dir, cache) {
		t.Errorf("image %+v", img)
	}

	// Reused from the cache, quickly, without a build.
	start := time.Now()
	again, err := EnsureImage(context.Background(), ImageOptions{CacheDir: cache, build: stubBuild(&calls, 0)})
	if err != nil || again.Built || again.Dir != img.Dir || calls.Load() != 1 {
		t.Fatalf("second call: %+v, %v, %d builds", again, err, calls.Load())
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("a cached image took %s", d)
	}

	// Another input is another image.
	other, err := EnsureImage(context.Background(), ImageOptions{CacheDir: cache, ExtraPackages: []string{"multipath-tools"}, build: stubBuild(&calls, 0)})
	if err != nil || other.Dir == img.Dir || !other.Built {
		t.Fatalf("with extra packages: %+v, %v", other, err)
	}
}

func TestEnsureImageFailedBuildLeavesNothing(t *testing.T) {
	fakeKernels(t, []string{"6.1.0-56-amd64"}, []string{"6.1.0-56-amd64"})
	cache := t.TempDir()
	failing := func(ctx context.Context, p buildPlan) error {
		os.WriteFile(filepath.Join(p.Dir, diskFile), []byte("half"), 0o644)
		return errors.New("debootstrap: mirror unreachable")
	}
	_, err := EnsureImage(context.Background(), ImageOptions{CacheDir: cache, build: failing})
	if err == nil || !strings.Contains(err.Error(), "mirror unreachable") {
		t.Fatalf("err = %v, want the build's error", err)
	}
	if left := listDir(t, cache); len(left) != 1 || left[0] != ".lock" {
		t.Errorf("the cache holds %q after a failed build, want only .lock", left)
	}

	// A killed build's directory is removed by the next build.
	stale := filepath.Join(cache, ".build-deadbeef-999999")
	os.MkdirAll(filepath.Join(stale, "root", "etc"), 0o755)
	var calls atomic.Int32
	img, err := EnsureImage(context.Background(), ImageOptions{CacheDir: cache, build: stubBuild(&calls, 0)})
	if err != nil || !img.Built {
		t.Fatalf("after the failure: %+v, %v", img, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale build directory still there: %v", err)
	}
}

func TestEnsureImageWaitEndsWithContext(t *testing.T) {
	fakeKernels(t, []string{"6.1.0-56-amd64"}, []string{"6.1.0-56-amd64"})
	cache := t.TempDir()
	unlock, err := lockFile(context.Background(), filepath.Join(cache, ".lock"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var calls atomic.Int32
	_, err = EnsureImage(ctx, ImageOptions{CacheDir: cache, build: stubBuild(&calls, 0)})
	if !errors.Is(err, context.DeadlineExceeded) || calls.Load() != 0 {
		t.Fatalf("err = %v after %d builds; want the deadline while another process holds the lock", err, calls.Load())
	}
}

func TestLoadImageRejectsIncomplete(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, manifestFile), []byte(`{"key":"k","kernelVersion":"v"}`), 0o644)
	os.WriteFile(filepath.Join(dir, diskFile), nil, 0o644)
	if _, err := loadImage(dir); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("err = %v, want incomplete", err)
	}
	os.WriteFile(filepath.Join(dir, initrdFile), nil, 0o644)
	os.WriteFile(filepath.Join(dir, kernelFile), nil, 0o644)
	img, err := loadImage(dir)
	if err != nil || filepath.Base(img.Kernel) != kernelFile {
		t.Errorf("with the compressed kernel only: %+v, %v", img, err)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestPruneUnused(t *testing.T) {
	cache := t.TempDir()
	old := time.Now().Add(-30 * 24 * time.Hour)
	mk := func(name string, lastUse time.Time, image bool) {
		dir := filepath.Join(cache, name)
		os.MkdirAll(dir, 0o755)
		f := filepath.Join(dir, "some.deb")
		if image {
			f = filepath.Join(dir, manifestFile)
		}
		os.WriteFile(f, []byte("{}"), 0o644)
		os.Chtimes(f, lastUse, lastUse)
	}
	mk("current", old, true)       // the image just built: kept whatever its age
	mk("old", old, true)           // unused for a month: pruned
	mk("recent", time.Now(), true) // used today by another checkout: kept
	mk("debs", old, false)         // debootstrap's download cache: kept
	var log strings.Builder
	pruneUnused(cache, "current", unusedFor, &log)
	if got := strings.Join(listDir(t, cache), " "); got != "current debs recent" {
		t.Errorf("left %q, want current debs recent", got)
	}
	if !strings.Contains(log.String(), "pruned image "+filepath.Join(cache, "old")) {
		t.Errorf("log %q does not name the pruned image", log.String())
	}
}
