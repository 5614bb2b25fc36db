package vm

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// xzMagic starts an xz stream; Debian compresses its x86 kernels with xz.
var xzMagic = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}

// xenElfnotePhys32Entry is the ELF note type (in a "Xen" note) of the PVH
// entry point.
const xenElfnotePhys32Entry = 18

// extractPVHKernel writes the uncompressed kernel ELF of bzImage to out, if
// the kernel has a PVH entry point that QEMU can jump to directly. Under TCG
// a bzImage spends about seven seconds decompressing itself; done once on
// the host at build time, every boot saves that. An error means: boot the
// bzImage instead.
func extractPVHKernel(bzImage, out string) error {
	data, err := os.ReadFile(bzImage)
	if err != nil {
		return err
	}
	off := bytes.Index(data, xzMagic)
	if off < 0 {
		return errors.New("the kernel is not xz-compressed")
	}
	xz, err := LookTool("xz")
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(xz, "-dc", "--single-stream")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(data[off:]), f, &stderr
	runErr := cmd.Run()
	if err := f.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		os.Remove(out)
		return fmt.Errorf("xz -d: %v: %s", runErr, bytes.TrimSpace(stderr.Bytes()))
	}
	if err := checkPVH(out); err != nil {
		os.Remove(out)
		return err
	}
	return nil
}

// checkPVH makes sure path is an ELF kernel with a PVH entry note.
func checkPVH(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("the decompressed kernel: %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			continue
		}
		if hasNote(b, f.ByteOrder, "Xen", xenElfnotePhys32Entry) {
			return nil
		}
	}
	return errors.New("the kernel has no PVH entry point (CONFIG_PVH)")
}

// hasNote walks an ELF note segment for a note of name and type.
func hasNote(b []byte, bo binary.ByteOrder, name string, typ uint32) bool { //nolint:unparam // a general ELF note lookup; only the Xen PVH note is wanted today
	align := func(n uint32) uint32 { return (n + 3) &^ 3 }
	for len(b) >= 12 {
		namesz, descsz, t := bo.Uint32(b[0:]), bo.Uint32(b[4:]), bo.Uint32(b[8:])
		b = b[12:]
		if uint64(align(namesz))+uint64(align(descsz)) > uint64(len(b)) {
			return false
		}
		n := string(bytes.TrimRight(b[:namesz], "\x00"))
		if n == name && t == typ {
			return true
		}
		b = b[align(namesz)+align(descsz):]
	}
	return false
}
