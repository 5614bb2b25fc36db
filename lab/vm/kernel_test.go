package vm

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeKernels points bootDir and modulesDir at a temporary tree with
// vmlinuz files for versions, of which withModules also have modules.
func fakeKernels(t *testing.T, versions []string, withModules []string) {
	t.Helper()
	root := t.TempDir()
	oldBoot, oldMods := bootDir, modulesDir
	bootDir, modulesDir = filepath.Join(root, "boot"), filepath.Join(root, "modules")
	t.Cleanup(func() { bootDir, modulesDir = oldBoot, oldMods })
	os.MkdirAll(bootDir, 0o755)
	for _, v := range versions {
		os.WriteFile(filepath.Join(bootDir, "vmlinuz-"+v), []byte("kernel "+v), 0o644)
	}
	for _, v := range withModules {
		os.MkdirAll(filepath.Join(modulesDir, v), 0o755)
		os.WriteFile(filepath.Join(modulesDir, v, "modules.dep"), nil, 0o644)
	}
}

func TestFindKernel(t *testing.T) {
	tests := []struct {
		name        string
		kernels     []string
		withModules []string
		want        string
		wantErr     string
	}{
		{"newest by number, not by text", []string{"6.1.0-9-amd64", "6.1.0-56-amd64", "6.1.0-10-amd64"}, []string{"6.1.0-9-amd64", "6.1.0-56-amd64", "6.1.0-10-amd64"}, "6.1.0-56-amd64", ""},
		{"only kernels with modules", []string{"6.1.0-56-amd64", "6.1.0-57-amd64"}, []string{"6.1.0-56-amd64"}, "6.1.0-56-amd64", ""},
		{"no kernel", nil, nil, "", "no "},
		{"no modules", []string{"6.1.0-56-amd64"}, nil, "", "modules.dep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeKernels(t, tt.kernels, tt.withModules)
			got, err := findKernel()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("findKernel = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestVersionLess(t *testing.T) {
	for _, c := range [][2]string{{"6.1.0-9-amd64", "6.1.0-10-amd64"}, {"5.10.0-1-amd64", "6.1.0-1-amd64"}, {"6.1.0-5", "6.1.0-5-amd64"}, {"6.1.0-5-amd64", "6.1.0-5-cloud"}} {
		if !versionLess(c[0], c[1]) || versionLess(c[1], c[0]) {
			t.Errorf("want %s < %s", c[0], c[1])
		}
	}
}

func TestCheckStaticBusybox(t *testing.T) {
	if err := checkStaticBusybox("/nonexistent/busybox"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing file: %v", err)
	}
	// The test binary itself is dynamically linked unless built with CGO_ENABLED=0;
	// /bin/sh on Debian always is.
	if err := checkStaticBusybox("/bin/sh"); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("/bin/sh: %v, want a dynamically linked error", err)
	}
	notELF := filepath.Join(t.TempDir(), "busybox")
	os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755)
	if err := checkStaticBusybox(notELF); err == nil {
		t.Error("a shell script was accepted as busybox")
	}
}

func TestHasNote(t *testing.T) {
	note := func(name string, typ uint32, desc []byte) []byte {
		n := append([]byte(name), 0)
		b := binary.LittleEndian.AppendUint32(nil, uint32(len(n)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(desc)))
		b = binary.LittleEndian.AppendUint32(b, typ)
		for len(n)%4 != 0 {
			n = append(n, 0)
		}
		b = append(b, n...)
		b = append(b, desc...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	seg := append(note("GNU", 3, []byte{1, 2, 3, 4, 5}), note("Xen", 6, []byte("linux\x00"))...)
	le := binary.LittleEndian
	if hasNote(seg, le, "Xen", xenElfnotePhys32Entry) {
		t.Error("found a PVH note where there is none")
	}
	seg = append(seg, note("Xen", xenElfnotePhys32Entry, []byte{0, 0x10, 0, 1})...)
	if !hasNote(seg, le, "Xen", xenElfnotePhys32Entry) {
		t.Error("missed the PVH note")
	}
	if hasNote(seg[:len(seg)-6], le, "Xen", xenElfnotePhys32Entry) {
		t.Error("a truncated note was accepted")
	}
}
