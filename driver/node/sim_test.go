package node

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"k8s.io/klog/v2"
	utilexec "k8s.io/utils/exec"
	testingexec "k8s.io/utils/exec/testing"
)

// cmdSim answers host commands in unit tests: each command line is
// recorded and handed to the last registered rule whose prefix matches
// it. A command no rule matches fails the test.
type cmdSim struct {
	t     *testing.T
	mu    sync.Mutex
	ran   []string
	rules []simRule
}

type simRule struct {
	prefix string
	fn     func(argv []string) (string, error)
}

func newCmdSim(t *testing.T) *cmdSim { return &cmdSim{t: t} }

// on registers a rule for command lines starting with prefix (whole words).
func (s *cmdSim) on(prefix string, fn func(argv []string) (string, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, simRule{prefix, fn})
}

// reply registers a rule with a fixed answer.
func (s *cmdSim) reply(prefix, out string, err error) {
	s.on(prefix, func([]string) (string, error) { return out, err })
}

// exec is a k8s.io/utils/exec fake whose every command goes to the sim.
func (s *cmdSim) exec() *testingexec.FakeExec {
	fe := &testingexec.FakeExec{}
	for range 5000 {
		fe.CommandScript = append(fe.CommandScript, func(cmd string, args ...string) utilexec.Cmd {
			argv := append([]string{cmd}, args...)
			fc := &testingexec.FakeCmd{CombinedOutputScript: []testingexec.FakeAction{func() ([]byte, []byte, error) {
				out, err := s.run(argv)
				return []byte(out), nil, err
			}}}
			return testingexec.InitFakeCmd(fc, cmd, args...)
		})
	}
	return fe
}

func (s *cmdSim) run(argv []string) (string, error) {
	line := strings.Join(argv, " ")
	s.mu.Lock()
	s.ran = append(s.ran, line)
	var fn func([]string) (string, error)
	for _, r := range slices.Backward(s.rules) {
		if line == r.prefix || strings.HasPrefix(line, r.prefix+" ") {
			fn = r.fn
			break
		}
	}
	s.mu.Unlock()
	if fn == nil {
		s.t.Errorf("unexpected host command: %s", line)
		return "command not found", testingexec.FakeExitError{Status: 127}
	}
	return fn(argv)
}

// lines are the command lines run so far that start with prefix.
func (s *cmdSim) lines(prefix string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.ran {
		if l == prefix || strings.HasPrefix(l, prefix+" ") {
			out = append(out, l)
		}
	}
	return out
}

func (s *cmdSim) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ran = nil
}

// exit is a failed command's error with an exit status.
func exit(code int) error { return testingexec.FakeExitError{Status: code} }

// arg returns the value after flag in argv ("" when absent).
func arg(argv []string, flag string) string {
	if i := slices.Index(argv, flag); i >= 0 && i+1 < len(argv) {
		return argv[i+1]
	}
	return ""
}

// tree builds sysfs and /dev look-alikes under a temporary root.
type tree struct {
	t    *testing.T
	root string
}

func (tr tree) path(rel string) string { return filepath.Join(tr.root, rel) }

func (tr tree) file(rel, content string) {
	tr.t.Helper()
	p := tr.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// device makes a regular file standing in for a device node, size bytes long.
func (tr tree) device(rel string, size int64) {
	tr.t.Helper()
	tr.file(rel, "")
	if err := os.Truncate(tr.path(rel), size); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr tree) link(rel, target string) {
	tr.t.Helper()
	p := tr.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	_ = os.Remove(p)
	if err := os.Symlink(target, p); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr tree) remove(rel string) {
	tr.t.Helper()
	if err := os.RemoveAll(tr.path(rel)); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr tree) exists(rel string) bool { return exists(tr.path(rel)) }

// attachFixture is a Service with every built-in attacher, a fake mounter,
// the command sim, and sysfs and /dev under a temporary tree.
type attachFixture struct {
	*fixture
	sim  *cmdSim
	tree tree
	logs *bytes.Buffer
	// disk holds each simulated device's filesystem type for blkid and mkfs.
	disk map[string]string
}

func newAttachFixture(t *testing.T, mods ...func(*Options)) *attachFixture {
	t.Helper()
	sim := newCmdSim(t)
	logs := &bytes.Buffer{}
	f := &attachFixture{sim: sim, logs: logs, disk: map[string]string{}}
	mods = append([]func(*Options){func(o *Options) {
		o.Exec = sim.exec()
		o.Logger = slog.New(slog.NewTextHandler(&syncBuffer{b: logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}}, mods...)
	f.fixture = newFixture(t, mods...)
	f.tree = tree{t: t, root: filepath.Join(f.root, "host")}
	f.svc.host.env = testEnv(f.tree)
	f.tree.file("sys/module/nvme_tcp/refcnt", "1") // loaded, as on a prepared node
	f.diskRules()
	return f
}

// testEnv points a host at a temporary tree and makes waits short.
func testEnv(tr tree) hostEnv {
	return hostEnv{
		sysRoot:    tr.path("sys"),
		devRoot:    tr.path("dev"),
		tempDir:    tr.path("tmp"),
		poll:       time.Millisecond,
		wait:       300 * time.Millisecond,
		attempts:   3,
		retryDelay: 0,
		resolve: func(_ context.Context, host string) ([]string, error) {
			if host == "storage.example" {
				return []string{"fd00::7", "10.0.0.7"}, nil
			}
			return nil, &os.PathError{Op: "lookup", Path: host, Err: os.ErrNotExist}
		},
	}
}

// diskRules answer blkid, mkfs, fsck, blockdev and the resize tools from
// f.disk, as the real tools would for the simulated devices.
func (f *attachFixture) diskRules() {
	f.sim.on("blkid", func(argv []string) (string, error) {
		fs := f.disk[resolved(argv[len(argv)-1])]
		if fs == "" {
			return "", exit(2)
		}
		return "TYPE=" + fs + "\n", nil
	})
	for _, fs := range []string{"ext3", "ext4", "xfs", "btrfs"} {
		f.sim.on("mkfs."+fs, func(argv []string) (string, error) {
			f.disk[resolved(argv[len(argv)-1])] = fs
			return "", nil
		})
	}
	f.sim.reply("fsck", "", nil)
	f.sim.reply("blockdev --getro", "0\n", nil)
	f.sim.reply("resize2fs", "The filesystem is already 262144 (4k) blocks long.  Nothing to do!", nil)
	f.sim.reply("xfs_growfs", "", nil)
}

func (f *attachFixture) stageCtx(vc map[string]string, c *csi.VolumeCapability) *csi.NodeStageVolumeRequest {
	return &csi.NodeStageVolumeRequest{VolumeId: volID, StagingTargetPath: f.staging, VolumeCapability: c, VolumeContext: vc}
}

// mount-utils logs through klog; the tests' own output is what matters.
func init() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}

// syncBuffer lets concurrent log writes share a buffer.
type syncBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
