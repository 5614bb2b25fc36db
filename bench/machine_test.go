package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The whole machine's CPU, read around a batch: how busy the cores were
// says whether a batch's wall time is the cores' (busy near 100 %) or not,
// and the busy time that was none of the three sides' is other work on the
// machine. Here and not in lab/procstat because bench/compare-sim.sh builds
// this package against the BEFORE tree's lab packages.

// machineCPU is all cores' busy (every state but idle and iowait) and
// total time so far, from /proc/stat's first line.
func machineCPU(b *testing.B) (busy, total time.Duration) {
	b.Helper()
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Fatal(err)
	}
	busy, total, err = parseMachineCPU(raw)
	if err != nil {
		b.Fatal(err)
	}
	return busy, total
}

// parseMachineCPU reads /proc/stat's "cpu" line: user nice system idle
// iowait irq softirq steal, in USER_HZ ticks (guest and guest_nice are
// inside user and nice, so not added again).
func parseMachineCPU(raw []byte) (busy, total time.Duration, err error) {
	line, _, _ := bytes.Cut(raw, []byte{'\n'})
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: first line %q, want \"cpu\" and 8 or more counters", line)
	}
	var all, idle int64
	for i := 1; i <= 8; i++ {
		t, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: counter %d is %q", i, f[i])
		}
		all += t
		if i == 4 || i == 5 { // idle, iowait
			idle += t
		}
	}
	const tick = 10 * time.Millisecond // USER_HZ 100
	return time.Duration(all-idle) * tick, time.Duration(all) * tick, nil
}

// TestParseMachineCPU: busy is every counter but idle and iowait; a line
// that is not /proc/stat's "cpu" line is an error naming it.
func TestParseMachineCPU(t *testing.T) {
	busy, total, err := parseMachineCPU([]byte("cpu  100 5 40 800 30 2 3 1 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := 151 * 10 * time.Millisecond; busy != want {
		t.Errorf("busy %v; want %v", busy, want)
	}
	if want := 981 * 10 * time.Millisecond; total != want {
		t.Errorf("total %v; want %v", total, want)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 3", "cpu 1 2 3 4 5 6 7 x"} {
		if _, _, err := parseMachineCPU([]byte(bad)); err == nil {
			t.Errorf("parseMachineCPU(%q): no error", bad)
		}
	}
}
