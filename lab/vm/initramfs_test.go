package vm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestInitramfsReadsBackWithCpio checks the archive with an independent
// reader, GNU cpio: names, types, the console device and file contents.
func TestInitramfsReadsBackWithCpio(t *testing.T) {
	cpio, err := exec.LookPath("cpio")
	if err != nil {
		t.Skip("cpio is not installed (scripts/ensure-vm.sh installs it)")
	}
	src := t.TempDir()
	bb := filepath.Join(src, "busybox")
	if err := os.WriteFile(bb, []byte("not really busybox"), 0o755); err != nil {
		t.Fatal(err)
	}
	mods := []string{"kernel/fs/jbd2/jbd2.ko", "kernel/fs/ext4/ext4.ko"}
	for _, m := range mods {
		p := filepath.Join(src, m)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("module "+m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var gz bytes.Buffer
	if err := writeCPIO(&gz, initramfsEntries(bb, "#!/bin/busybox sh\necho init\n", "6.1.0-test", src, mods)); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("gzip", "-dc")
	cmd.Stdin = bytes.NewReader(gz.Bytes())
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("gzip -dc: %v", err)
	}
	list := exec.Command(cpio, "-itv", "--quiet")
	list.Stdin = bytes.NewReader(raw)
	out, err := list.Output()
	if err != nil {
		t.Fatalf("cpio -itv: %v", err)
	}
	listing := string(out)
	for _, want := range []string{
		"drwxr-xr-x", " bin\n", " dev\n", " newroot\n", " proc\n", " sys\n",
		"-rwxr-xr-x", " bin/busybox\n", " init\n", " bootmods.txt\n",
		" lib/modules/6.1.0-test/kernel/fs/ext4/ext4.ko\n",
	} {
		if !strings.Contains(listing, want) {
			t.Errorf("listing lacks %q:\n%s", want, listing)
		}
	}
	if !regexpLine(listing, `^crw------- .* 5, +1 .* dev/console$`) {
		t.Errorf("no character device 5,1 dev/console:\n%s", listing)
	}
	extract := func(name string) string {
		c := exec.Command(cpio, "-i", "--quiet", "--to-stdout", name)
		c.Stdin = bytes.NewReader(raw)
		b, err := c.Output()
		if err != nil {
			t.Fatalf("cpio -i %s: %v", name, err)
		}
		return string(b)
	}
	if got := extract("init"); got != "#!/bin/busybox sh\necho init\n" {
		t.Errorf("init = %q", got)
	}
	if got := extract("bootmods.txt"); got != "/lib/modules/6.1.0-test/kernel/fs/jbd2/jbd2.ko\n/lib/modules/6.1.0-test/kernel/fs/ext4/ext4.ko\n" {
		t.Errorf("bootmods.txt = %q", got)
	}
	if got := extract("lib/modules/6.1.0-test/kernel/fs/jbd2/jbd2.ko"); got != "module kernel/fs/jbd2/jbd2.ko" {
		t.Errorf("jbd2.ko = %q", got)
	}
	if got := extract("bin/busybox"); got != "not really busybox" {
		t.Errorf("busybox = %q", got)
	}
}

func TestWriteCPIOMissingSource(t *testing.T) {
	var buf bytes.Buffer
	err := writeCPIO(&buf, []cpioEntry{{Name: "x", Mode: cpioReg | 0o644, Source: filepath.Join(t.TempDir(), "missing")}})
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("err = %v, want one naming the missing file", err)
	}
}

// regexpLine reports whether a line of s matches the pattern.
func regexpLine(s, pattern string) bool {
	return regexp.MustCompile("(?m)" + pattern).MatchString(s)
}
