package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// The third floor of the local-hostpath pair: gRPC and the file system
// together, in one process. The empty CSI server of
// BenchmarkHostpathPairFloorProcess does, in its CreateVolume and
// DeleteVolume handlers, the system calls of BenchmarkHostpathPairFSFloor
// (fsCreate, fsDelete). Its CPU per pair is what any Go gRPC driver pays
// that must make a volume durable before it answers: the two floors plus
// what Go's runtime adds when a handler blocks in fsync while the
// transport's goroutines wait (the P hand-off, sysmon, the wake-ups).
// What switchyard's driver costs above it is switchyard's own.

// fsFloorDirEnv names the directory the floor server stores under.
const fsFloorDirEnv = "SWITCHYARD_BENCH_FLOOR_FSDIR"

// fsFloorFsyncsEnv is 3 (the portable sequence, the default) or 2 (the
// metadata directory's fsync left out, as dirvol does on ext4).
const fsFloorFsyncsEnv = "SWITCHYARD_BENCH_FLOOR_FSYNCS"

// fsFloorLockEnv set runs each create's system calls on a locked OS
// thread (runtime.LockOSThread): does keeping the fsyncs on one thread
// spare the runtime's hand-offs?
const fsFloorLockEnv = "SWITCHYARD_BENCH_FLOOR_LOCK"

// fsFloorServer holds the floor's two directories.
type fsFloorServer struct {
	vdir, mdir  string
	meta        []byte
	syncMetaDir bool
	lock        bool
}

// fsFloorFromEnv is the floor server's store, or nil when the floor is
// gRPC alone.
func fsFloorFromEnv() (*fsFloorServer, error) {
	dir := os.Getenv(fsFloorDirEnv)
	if dir == "" {
		return nil, nil
	}
	s := &fsFloorServer{
		vdir: filepath.Join(dir, "v"), mdir: filepath.Join(dir, ".switchyard", "volumes"),
		meta:        []byte(`{"name":"pvc-0000","capacityBytes":0,"createdAt":"2026-11-27T00:00:00.000000000Z"}`),
		syncMetaDir: true,
		lock:        os.Getenv(fsFloorLockEnv) != "",
	}
	switch v := os.Getenv(fsFloorFsyncsEnv); v {
	case "", "3":
	case "2":
		s.syncMetaDir = false
	default:
		return nil, fmt.Errorf("%s=%q: want 2 or 3", fsFloorFsyncsEnv, v)
	}
	for _, d := range []string{s.vdir, s.mdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *fsFloorServer) create(id string) error {
	if s.lock {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	return fsCreate(filepath.Join(s.vdir, id), filepath.Join(s.mdir, id+".json"), s.vdir, s.mdir, s.meta, s.syncMetaDir)
}

func (s *fsFloorServer) delete(id string) error {
	return fsDelete(filepath.Join(s.vdir, id), filepath.Join(s.mdir, id+".json"))
}

// BenchmarkHostpathPairFloorFSProcess is that floor: the pair of
// BenchmarkHostpathPairProcess, one caller, against the empty gRPC
// server (16 stream workers) doing the floor's system calls; server CPU
// from /proc/<pid>/stat, perf with SWITCHYARD_PERF_DIR as the driver's.
// fsyncs=3 is the portable sequence, fsyncs=2 the one without the
// metadata directory's fsync; locked runs the create on a locked thread.
func BenchmarkHostpathPairFloorFSProcess(b *testing.B) {
	skipUnlessLinux(b)
	for _, c := range []struct {
		fs, fsyncs string
		lock       bool
	}{{"disk", "3", false}, {"disk", "2", false}, {"disk", "2", true}, {"tmpfs", "3", false}} {
		name := fmt.Sprintf("fs=%s/fsyncs=%s", c.fs, c.fsyncs)
		if c.lock {
			name += "/locked"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				data := b.TempDir()
				if c.fs == "tmpfs" {
					shm, err := os.MkdirTemp("/dev/shm", "switchyard-floorfs-")
					if err != nil {
						b.Skipf("no /dev/shm: %v", err)
					}
					b.Cleanup(func() { os.RemoveAll(shm) })
					data = shm
				}
				d := startFloorFS(b, data, c.fsyncs, c.lock)
				stopPerf := d.perfRecord(b, b.Name())
				cpu0 := d.cpu(b)
				lat, _ := batch(b, hostpathPairs, 1, createDeletePair(d.c.Controller))
				cpu := d.cpu(b) - cpu0
				stopPerf()
				b.ReportMetric(ms(cpu)/hostpathPairs, "server-cpu-ms/pair")
				b.ReportMetric(us(pct(lat, .5)), "pair-p50-us")
				// lstat, mkdir, rmdir, unlink, write, and open+fsync+close each.
				b.ReportMetric(float64(5+3*mustAtoi(b, c.fsyncs)), "syscalls/pair")
			}
		})
	}
}

// startFloorFS runs this test binary as the empty CSI server with the
// driver's stream workers, storing under data.
func startFloorFS(b *testing.B, data, fsyncs string, lock bool) driverProc {
	env := []string{fsFloorDirEnv + "=" + data, fsFloorFsyncsEnv + "=" + fsyncs}
	if lock {
		env = append(env, fsFloorLockEnv+"=1")
	}
	return startFloor(b, true, env...)
}

func mustAtoi(b *testing.B, s string) int {
	b.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		b.Fatal(err)
	}
	return n
}
