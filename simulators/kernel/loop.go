package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Regular files reach the targets through loop devices: nvmet and LIO's
// iblock then see a block device whose size follows the file (losetup -c).

// blockPaths are the files and devices a State's namespaces and LUNs name.
func blockPaths(s State) []string {
	var out []string
	for _, sub := range s.NVMe {
		for _, ns := range sub.Namespaces {
			out = append(out, ns.Path)
		}
	}
	for _, t := range s.ISCSI {
		for _, l := range t.LUNs {
			out = append(out, l.Path)
		}
	}
	return out
}

// attachLoops fills p.devs: this owner's paths get a current loop device
// (attached now if need be), the other owners' keep what they have. Every
// loop device whose file changed size is refreshed, whoever owns it: a
// zvol grown through one simulator may be served through another.
func (p *pass) attachLoops() {
	for _, st := range p.all[:len(p.all)-1] {
		for _, path := range blockPaths(st) {
			if dev := p.loopOf(path); dev != "" {
				p.devs[path] = dev
			} else if isBlockDevice(path) {
				p.devs[path] = path
			}
		}
	}
	for _, path := range blockPaths(p.new) {
		if _, done := p.devs[path]; done && p.loopOf(path) == "" {
			continue // a block device
		}
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			continue // the namespace or LUN using it reports the error
		case fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0:
			p.devs[path] = path
			continue
		case !fi.Mode().IsRegular():
			continue
		}
		dev := p.currentLoop(path)
		if dev == "" {
			out, err := p.exec("losetup", "-f", "--show", path)
			if err != nil {
				p.fail("attaching %s to a loop device: %v", path, err)
				continue
			}
			dev = strings.TrimSpace(out)
			if !strings.HasPrefix(dev, "/dev/") {
				p.fail("losetup -f --show %s answered %q, not a device", path, out)
				continue
			}
			p.l.Loops = append(p.l.Loops, loopDev{File: path, Device: dev})
		}
		p.devs[path] = dev
	}
	p.refreshLoops()
}

// refreshLoops makes loop devices follow their files' sizes (losetup -c).
func (p *pass) refreshLoops() {
	for _, lp := range p.l.Loops {
		if p.backingFile(lp.Device) != lp.File {
			continue
		}
		fi, err := os.Stat(lp.File)
		if err != nil {
			continue
		}
		if size, ok := p.loopSize(lp.Device); ok && size != fi.Size() {
			if _, err := p.exec("losetup", "-c", lp.Device); err != nil {
				p.fail("refreshing the size of %s (%s changed size): %v", lp.Device, lp.File, err)
				continue
			}
			p.resized[lp.Device] = true
		}
	}
}

// loopOf is the newest loop device the ledger has for file ("" if none).
func (p *pass) loopOf(file string) string {
	dev := ""
	for _, lp := range p.l.Loops {
		if lp.File == file {
			dev = lp.Device
		}
	}
	return dev
}

// currentLoop is the ledger's loop device for file if the kernel still
// has it on that file: a file replaced by another (zfs receive renames
// over the old one) leaves the device on the deleted inode.
func (p *pass) currentLoop(file string) string {
	for _, lp := range p.l.Loops {
		if lp.File == file && p.backingFile(lp.Device) == file {
			return lp.Device
		}
	}
	return ""
}

func (p *pass) sysBlock(dev string) string {
	return filepath.Join(p.r.o.SysFS, "block", filepath.Base(dev))
}

// backingFile is what the loop device serves ("<file> (deleted)" when the
// file was removed or replaced).
func (p *pass) backingFile(dev string) string {
	b, err := os.ReadFile(filepath.Join(p.sysBlock(dev), "loop", "backing_file"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// loopSize is the device's size in bytes.
func (p *pass) loopSize(dev string) (int64, bool) {
	b, err := os.ReadFile(filepath.Join(p.sysBlock(dev), "size"))
	if err != nil {
		return 0, false
	}
	sectors, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, false
	}
	return sectors * 512, true
}

// detachLoops lets go of the loop devices no target uses any more. A
// device still open elsewhere is freed by the kernel when closed
// (losetup -d sets autoclear).
func (p *pass) detachLoops() {
	var keep []loopDev
	for _, lp := range p.l.Loops {
		if p.devs[lp.File] == lp.Device && p.neededByAll(lp.File) {
			keep = append(keep, lp)
			continue
		}
		if p.backingFile(lp.Device) == "" {
			continue // gone already
		}
		if _, err := p.exec("losetup", "-d", lp.Device); err != nil {
			p.fail("detaching %s (%s): %v", lp.Device, lp.File, err)
			keep = append(keep, lp)
		}
	}
	p.l.Loops = keep
}

func (p *pass) neededByAll(path string) bool {
	for _, st := range p.all {
		for _, x := range blockPaths(st) {
			if x == path {
				return true
			}
		}
	}
	return false
}

func isBlockDevice(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0
}

// device is what a namespace or LUN path is served by, or an error saying
// why it cannot be.
func (p *pass) device(path string) (string, error) {
	if dev, ok := p.devs[path]; ok {
		return dev, nil
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s: %w", path, bare(err))
	case !fi.Mode().IsRegular() && !(fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0):
		return "", fmt.Errorf("%s is neither a regular file nor a block device", path)
	}
	return "", fmt.Errorf("%s has no loop device (see the losetup error)", path)
}
