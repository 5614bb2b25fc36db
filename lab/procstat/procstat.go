// Package procstat reads a process's CPU time and resident memory from
// /proc, the figures the lab's benchmarks report per side (driver,
// simulator, client). Reading them from the kernel, around a batch, keeps
// them honest on a busy machine, where only wall times stretch.
package procstat

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ticksPerSecond is USER_HZ, the unit of /proc/<pid>/stat's times on Linux.
const ticksPerSecond = 100

// CPU is process pid's user + system CPU time so far.
func CPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which may hold spaces and
	// parentheses itself: cut at the last ')'.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 || i+2 > len(raw) {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(raw[i+2:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name, want 13 or more", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	return time.Duration(utime+stime) * time.Second / ticksPerSecond, nil
}

// RSS is process pid's resident set (VmRSS) in bytes.
func RSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}
