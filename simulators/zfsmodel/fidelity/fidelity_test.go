package fidelity

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/lab/testtier"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// poolSize is the size of both sides' pools: zfs-fuse needs at least 64M
// per vdev; space figures are masked, so the sizes need only be close.
const poolSize = 128 << 20

// TestFidelity runs every script against real zfs (zfs-fuse) and the
// model, each on a fresh pool of the same name and mountpoint, and
// compares each command's stdout, stderr and exit code after Normalize and
// the known differences.
func TestFidelity(t *testing.T) {
	tools, ok, reason := FindTools()
	testtier.Need(t, testtier.Fidelity, ok, reason)
	start := time.Now()
	c := &comparer{used: map[string]int{}}
	for _, s := range scripts {
		t.Run(s.name, func(t *testing.T) { c.run(t, tools, s) })
	}
	if c.scripts == len(scripts) {
		for _, k := range knownDifferences {
			if c.used[k.name] == 0 {
				t.Errorf("known difference %q never occurred: remove it or add the script that shows it", k.name)
			}
		}
	}
	t.Logf("%d scripts, %d commands compared (%d mismatches, %d accepted as known differences) in %v",
		c.scripts, c.commands, c.mismatches, c.accepted, time.Since(start).Round(time.Millisecond))
	for _, k := range knownDifferences {
		t.Logf("known difference %-28s used %d times", k.name, c.used[k.name])
	}
}

// comparer runs scripts and keeps the counts for the summary.
type comparer struct {
	scripts, commands, mismatches, accepted int
	used                                    map[string]int // known difference name -> times it was needed
}

// side is one of the two systems a script runs on.
type side struct {
	name string
	t    Target
	pool string
	mnt  string
}

func (c *comparer) run(t *testing.T, tools Tools, s script) {
	dir := t.TempDir()
	pool := PoolName()
	mnt := filepath.Join(dir, "mnt")
	rp, err := CreatePool(tools, pool, dir, poolSize, mnt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rp.Destroy(); err != nil {
			t.Error(err)
		}
	})
	m, err := zfsmodel.Open(zfsmodel.Options{
		StateDir: filepath.Join(dir, "model"),
		Pools:    []zfsmodel.PoolSpec{{Name: pool, Size: poolSize}},
		// zfs-fuse's default (OpenZFS 2.2 turned compression on).
		Defaults: map[string]string{"compression": "off"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	model := Model{M: m}
	// Both pools report the same root mountpoint, set locally.
	if r := model.ZFS([]string{"set", "mountpoint=" + mnt, pool}, nil); r.Code != 0 {
		t.Fatalf("model: zfs set mountpoint=%s %s: %s", mnt, pool, r.Stderr)
	}
	realSide := side{name: "zfs-fuse", t: FuseReal{Real{Bin: tools.ZFS}}, pool: pool, mnt: mnt}
	mod := side{name: "model", t: model, pool: pool, mnt: mnt}
	for i, st := range s.steps {
		c.step(t, fmt.Sprintf("%s step %d: %s", s.name, i+1, st), st, realSide, mod)
	}
	c.scripts++
}

// outcome is what a step printed and returned on one side.
type outcome struct {
	args []string // the command whose output Normalize reads
	Result
}

func (c *comparer) step(t *testing.T, label string, st step, realSide, mod side) {
	t.Helper()
	exp, err := do(st, realSide)
	if err != nil {
		t.Fatalf("%s: %s: %v", label, realSide.name, err)
	}
	got, err := do(st, mod)
	if err != nil {
		t.Fatalf("%s: %s: %v", label, mod.name, err)
	}
	if st.put {
		return
	}
	for i := range exp {
		c.commands++
		e := Normalize(exp[i].args, exp[i].Result)
		g := Normalize(got[i].args, got[i].Result)
		if testing.Verbose() {
			t.Logf("%s\n  zfs-fuse: %d %q %q", label, e.Code, e.Stdout, e.Stderr)
		}
		if e == g {
			continue
		}
		if names, ok := acceptKnown(exp[i].args, e, g); ok {
			c.accepted++
			for _, n := range names {
				c.used[n]++
			}
			continue
		}
		c.mismatches++
		t.Errorf("%s\n%s", label, describe(e, g))
	}
}

// do runs a step on one side. A pipe gives two outcomes: the sending and
// the receiving command (the stream itself is each side's own format).
func do(st step, s side) ([]outcome, error) {
	ex := func(w []string) []string { return expand(w, s.pool, s.mnt) }
	switch {
	case st.put || st.cat:
		ds := ex([]string{st.dataset})[0]
		mp, err := Mountpoint(s.t, ds)
		if err != nil {
			return nil, err
		}
		dir, err := s.t.Dir(mp)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, st.file)
		if st.put {
			return nil, os.WriteFile(path, []byte(st.data), 0o644)
		}
		b, err := os.ReadFile(path)
		r := Result{Stdout: string(b)}
		if err != nil {
			r = Result{Stderr: strings.ReplaceAll(err.Error(), dir, "<dir>"), Code: 1}
		}
		return []outcome{{nil, r}}, nil
	case st.recv != nil:
		send := ex(st.args)
		r1 := s.t.ZFS(send, nil)
		recv := ex(st.recv)
		r2 := s.t.ZFS(recv, []byte(r1.Stdout))
		r1.Stdout = "" // each side's own stream format
		return []outcome{{send, r1}, {recv, r2}}, nil
	}
	args := ex(st.args)
	return []outcome{{args, s.t.ZFS(args, []byte(st.stdin))}}, nil
}

// describe shows how two results differ, stream by stream.
func describe(exp, got Result) string {
	var b strings.Builder
	if exp.Code != got.Code {
		fmt.Fprintf(&b, "exit code: zfs-fuse %d, model %d\n", exp.Code, got.Code)
	}
	for _, s := range []struct{ name, e, g string }{{"stdout", exp.Stdout, got.Stdout}, {"stderr", exp.Stderr, got.Stderr}} {
		if s.e != s.g {
			fmt.Fprintf(&b, "%s:\n  zfs-fuse: %q\n  model:    %q\n", s.name, s.e, s.g)
		}
	}
	return b.String()
}
