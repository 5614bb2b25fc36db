package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The two floors under BenchmarkHostpathPairProcess (issue 16's second
// row, ≤ 0.3 ms of driver CPU per create+delete pair at one caller): what
// gRPC costs for two empty calls, and what the file system costs for the
// system calls a crash-safe create and delete need. What the pair costs
// above their sum is switchyard's own. Run all three together:
//
//	go test -run '^$' -bench HostpathPair -benchtime 1x ./bench/

const hostpathPairs = 2000

// BenchmarkHostpathPairFloorProcess is the gRPC floor: the same
// CreateVolume and DeleteVolume requests, one after the other from
// SWITCHYARD_BENCH_CALLERS callers (default 1), against an empty gRPC-Go
// CSI server in its own process (floorChild, with the driver's 16 stream
// workers) that answers at once. Server CPU from /proc/<pid>/stat.
func BenchmarkHostpathPairFloorProcess(b *testing.B) {
	skipUnlessLinux(b)
	callers := benchCallers(b, 1)
	for range b.N {
		d := startFloor(b, true)
		ctl := d.c.Controller
		cpu0 := d.cpu(b)
		lat, _ := batch(b, hostpathPairs, callers, createDeletePair(ctl))
		cpu := d.cpu(b) - cpu0
		b.ReportMetric(ms(cpu)/hostpathPairs, "server-cpu-ms/pair")
		b.ReportMetric(us(pct(lat, .5)), "pair-p50-us")
	}
}

// BenchmarkHostpathPairFSFloor is the file-system floor: in this process,
// no gRPC, the fewest system calls that dirvol's crash-safety contract
// (driver/dirvol/empty.go) allows for an empty volume's create and delete:
//
//	create: lstat v/<id> (does it exist? idempotency), open+write+fsync+close
//	        of the metadata file, open+fsync+close of its directory (the new
//	        name durable before the volume can be), mkdir v/<id>,
//	        open+fsync+close of v/ (the volume durable before the answer)
//	delete: rmdir v/<id>, unlink the metadata (not synced: a lost delete is
//	        repeated by the CO)
//
// 14 system calls, 3 of them fsyncs. CPU per pair is this thread's
// (getrusage RUSAGE_THREAD), kernel time included. fs=disk is the test's
// temporary directory (this machine's ext4), fs=tmpfs /dev/shm.
func BenchmarkHostpathPairFSFloor(b *testing.B) {
	skipUnlessLinux(b)
	for _, fsys := range []string{"disk", "tmpfs"} {
		b.Run("fs="+fsys, func(b *testing.B) {
			for range b.N {
				base := b.TempDir()
				if fsys == "tmpfs" {
					shm, err := os.MkdirTemp("/dev/shm", "switchyard-fsfloor-")
					if err != nil {
						b.Skipf("no /dev/shm: %v", err)
					}
					b.Cleanup(func() { os.RemoveAll(shm) })
					base = shm
				}
				fsFloor(b, base)
			}
		})
	}
}

// BenchmarkHostpathPairFSFloorGo is the same sequence as any goroutine
// runs it (no locked thread), with the whole process's CPU (getrusage
// RUSAGE_SELF): what Go's runtime adds around system calls that block
// (an fsync that waits for the disk hands its P to another thread, and
// takes one back after). On tmpfs nothing blocks, so the two agree.
func BenchmarkHostpathPairFSFloorGo(b *testing.B) {
	skipUnlessLinux(b)
	for range b.N {
		base := b.TempDir()
		vdir, mdir := filepath.Join(base, "v"), filepath.Join(base, ".switchyard", "volumes")
		for _, d := range []string{vdir, mdir} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		meta := []byte(`{"name":"pvc-0000","capacityBytes":0,"createdAt":"2026-11-27T00:00:00.000000000Z"}`)
		cpu0 := selfCPU(b)
		for i := range hostpathPairs {
			id := fmt.Sprintf("pvc-%d", i)
			if err := fsPair(filepath.Join(vdir, id), filepath.Join(mdir, id+".json"), vdir, mdir, meta); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(ms(selfCPU(b)-cpu0)/hostpathPairs, "cpu-ms/pair")
	}
}

// fsFloor runs the pairs on one locked thread and reports its CPU.
func fsFloor(b *testing.B, base string) {
	vdir, mdir := filepath.Join(base, "v"), filepath.Join(base, ".switchyard", "volumes")
	for _, d := range []string{vdir, mdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	meta := []byte(`{"name":"pvc-0000","capacityBytes":0,"createdAt":"2026-11-27T00:00:00.000000000Z"}`)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0, t0 := threadCPU(b), time.Now()
	for i := range hostpathPairs {
		id := fmt.Sprintf("pvc-%d", i)
		vol, mf := filepath.Join(vdir, id), filepath.Join(mdir, id+".json")
		if err := fsPair(vol, mf, vdir, mdir, meta); err != nil {
			b.Fatal(err)
		}
	}
	cpu, wall := threadCPU(b)-cpu0, time.Since(t0)
	b.ReportMetric(ms(cpu)/hostpathPairs, "cpu-ms/pair")
	b.ReportMetric(us(wall)/hostpathPairs, "wall-us/pair")
	b.ReportMetric(14, "syscalls/pair")
	b.ReportMetric(3, "fsyncs/pair")
}

// fsPair is one create and delete, system call by system call.
func fsPair(vol, metaFile, vdir, mdir string, meta []byte) error {
	if err := fsCreate(vol, metaFile, vdir, mdir, meta, true); err != nil {
		return err
	}
	return fsDelete(vol, metaFile)
}

// fsCreate is the create half of fsPair: 12 system calls, 3 fsyncs, or
// 9 and 2 without syncMetaDir (the sequence dirvol uses where the file's
// fsync is known to make its new name durable: driver/dirvol/fsyncdir.go).
func fsCreate(vol, metaFile, vdir, mdir string, meta []byte, syncMetaDir bool) error {
	var st unix.Stat_t
	if err := unix.Lstat(vol, &st); err != unix.ENOENT {
		return fmt.Errorf("lstat %s: %v, want ENOENT", vol, err)
	}
	fd, err := unix.Open(metaFile, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	if _, err := unix.Write(fd, meta); err != nil {
		return err
	}
	if err := unix.Fsync(fd); err != nil {
		return err
	}
	if err := unix.Close(fd); err != nil {
		return err
	}
	if syncMetaDir {
		if err := syncDirFloor(mdir); err != nil {
			return err
		}
	}
	if err := unix.Mkdir(vol, 0o755); err != nil {
		return err
	}
	return syncDirFloor(vdir)
}

// fsDelete is the delete half of fsPair: 2 system calls, no fsync.
func fsDelete(vol, metaFile string) error {
	if err := unix.Rmdir(vol); err != nil {
		return err
	}
	return unix.Unlink(metaFile)
}

func syncDirFloor(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	err = unix.Fsync(fd)
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}

// threadCPU is the calling thread's user+system CPU time so far.
func threadCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
