package kernel

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"strings"
)

// LIO storage objects: iblock devices under core/<hba>/<name>.

// lioHBA is the HBA holding the reconcilers' iblock storage objects: one
// per device, shared by every LUN on it (iblock opens its device
// exclusively, so a device can back only one storage object).
const lioHBA = "iblock_7373"

// soName is the storage object of a device: /dev/loop3 -> loop3,
// /dev/mapper/vg-x -> mapper_vg-x.
func soName(dev string) string {
	return strings.ReplaceAll(strings.TrimPrefix(strings.TrimPrefix(dev, "/dev/"), "/"), "/", "_")
}

// storageObject makes (or finds) the iblock storage object of a device,
// with the unit serial given (or a fresh one). The serial is set once,
// when the object is made: LIO refuses to change it while a LUN exports
// the object.
func (p *pass) storageObject(dev, serial string) (string, error) {
	c := p.cfs
	name := soName(dev)
	dir := p.lioDir("core", lioHBA, name)
	if err := c.mkdir(p.lioDir("core", lioHBA)); err != nil {
		return "", err
	}
	if err := c.mkdir(dir); err != nil {
		return "", err
	}
	if c.attr(filepath.Join(dir, "enable")) == "1" {
		return dir, nil
	}
	if err := c.write(filepath.Join(dir, "control"), "udev_path="+dev); err != nil {
		return "", err
	}
	if err := c.write(filepath.Join(dir, "udev_path"), dev); err != nil {
		return "", err
	}
	if err := c.write(filepath.Join(dir, "enable"), "1"); err != nil {
		return "", err
	}
	// The owner's serial, so that a target restored after a reboot is the
	// same LUN to its initiators; else a fresh one per object: initiators
	// (multipath, udev's by-id) identify LUNs by it, and a loop device is
	// reused for other files.
	if serial == "" {
		serial = newSerial()
	}
	if err := c.set(filepath.Join(dir, "wwn", "vpd_unit_serial"), serial); err != nil {
		return "", err
	}
	return dir, nil
}

func newSerial() string {
	b := make([]byte, 16)
	rand.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// dropUnusedStorageObjects removes the objects of the reconcilers' HBA
// that no owner's LUN uses.
func (p *pass) dropUnusedStorageObjects() {
	want := map[string]bool{}
	for _, st := range p.all {
		for _, t := range st.ISCSI {
			for _, l := range t.LUNs {
				if dev, ok := p.devs[l.Path]; ok {
					want[soName(dev)] = true
				}
			}
		}
	}
	hba := p.lioDir("core", lioHBA)
	names := p.cfs.names(hba)
	left := 0
	for _, n := range names {
		if want[n] {
			left++
			continue
		}
		if err := p.cfs.rmdir(filepath.Join(hba, n)); err != nil {
			p.fail("removing unused iscsi storage object %s: %v", n, err)
			left++
		}
	}
	if len(names) > 0 && left == 0 {
		if err := p.cfs.rmdir(hba); err != nil {
			p.fail("removing %s: %v", hba, err)
		}
	}
}
