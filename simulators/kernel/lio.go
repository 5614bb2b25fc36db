package kernel

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// LIO's configfs tree (drivers/target): core/<hba>/<device> storage
// objects (control, udev_path, enable, wwn/), iscsi/<iqn>/tpgt_<n> with
// lun/lun_<n> (a symlink to the storage object), np/<ip>:<port>,
// acls/<initiator>/lun_<n> (a symlink to the TPG's LUN), attrib/, auth/
// and enable.

func (p *pass) lioDir(parts ...string) string {
	return filepath.Join(append([]string{p.r.o.ConfigFS, "target"}, parts...)...)
}

func tpgDir(tag int) string { return "tpgt_" + strconv.Itoa(tag) }

func (p *pass) lio() {
	if len(p.old.ISCSI) == 0 && len(p.new.ISCSI) == 0 {
		return
	}
	want := map[string]bool{}
	for _, t := range p.new.ISCSI {
		want[t.IQN] = true
	}
	for _, t := range p.old.ISCSI {
		if !want[t.IQN] {
			if err := p.removeTarget(t.IQN); err != nil {
				p.fail("removing iscsi target %s: %v", t.IQN, err)
			}
		}
	}
	for _, t := range p.new.ISCSI {
		if err := p.ensureTarget(t); err != nil {
			p.fail("iscsi target %s: %v", t.IQN, err)
		}
	}
	p.dropUnusedStorageObjects()
}

func (p *pass) removeTarget(iqn string) error {
	dir := p.lioDir("iscsi", iqn)
	for _, tpg := range p.cfs.names(dir) {
		if strings.HasPrefix(tpg, "tpgt_") {
			if err := p.removeTPG(filepath.Join(dir, tpg)); err != nil {
				return err
			}
		}
	}
	return p.cfs.rmdir(dir)
}

// removeTPG disables the portal group, then removes what it holds: the
// initiators' LUN mappings and ACLs, the LUNs, the portals.
func (p *pass) removeTPG(dir string) error {
	c := p.cfs
	if c.attr(filepath.Join(dir, "enable")) == "1" {
		if err := c.write(filepath.Join(dir, "enable"), "0"); err != nil {
			return err
		}
	}
	for _, acl := range c.names(filepath.Join(dir, "acls")) {
		if err := p.removeACL(filepath.Join(dir, "acls", acl)); err != nil {
			return err
		}
	}
	for _, lun := range c.names(filepath.Join(dir, "lun")) {
		if err := p.removeLUN(filepath.Join(dir, "lun", lun)); err != nil {
			return err
		}
	}
	for _, np := range c.names(filepath.Join(dir, "np")) {
		if err := c.rmdir(filepath.Join(dir, "np", np)); err != nil {
			return err
		}
	}
	return c.rmdir(dir)
}

func (p *pass) removeACL(dir string) error {
	for _, n := range p.cfs.names(dir) {
		if strings.HasPrefix(n, "lun_") {
			if err := p.removeMappedLUN(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return p.cfs.rmdir(dir)
}

func (p *pass) removeMappedLUN(dir string) error {
	for l := range p.cfs.links(dir) {
		if err := p.cfs.unlink(filepath.Join(dir, l)); err != nil {
			return err
		}
	}
	return p.cfs.rmdir(dir)
}

func (p *pass) removeLUN(dir string) error {
	for l := range p.cfs.links(dir) {
		if err := p.cfs.unlink(filepath.Join(dir, l)); err != nil {
			return err
		}
	}
	return p.cfs.rmdir(dir)
}

func (p *pass) ensureTarget(t Target) error {
	c := p.cfs
	if err := c.mkdir(p.lioDir("iscsi")); err != nil { // registers the iSCSI fabric
		return err
	}
	tdir := p.lioDir("iscsi", t.IQN)
	if err := c.mkdir(tdir); err != nil {
		return err
	}
	for _, n := range c.names(tdir) {
		if strings.HasPrefix(n, "tpgt_") && n != tpgDir(t.TPG) {
			if err := p.removeTPG(filepath.Join(tdir, n)); err != nil {
				return err
			}
		}
	}
	dir := filepath.Join(tdir, tpgDir(t.TPG))
	if err := c.mkdir(dir); err != nil {
		return err
	}
	var errs []string
	luns := p.targetLUNs(t, &errs)
	if err := p.targetACLs(t, dir, luns); err != nil {
		return err
	}
	if err := p.targetLUNLinks(dir, luns); err != nil {
		return err
	}
	if err := p.targetACLMappings(t, dir, luns); err != nil {
		return err
	}
	if err := p.targetPortals(t, dir); err != nil {
		return err
	}
	if err := p.targetAuth(t, dir); err != nil {
		return err
	}
	if err := c.set(filepath.Join(dir, "enable"), "1"); err != nil {
		return err
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// targetLUNs resolves the LUNs' storage objects: lun_<n> -> object dir.
// A LUN whose device cannot be served is left out (and reported).
func (p *pass) targetLUNs(t Target, errs *[]string) map[string]string {
	out := map[string]string{}
	for _, l := range t.LUNs {
		dev, err := p.device(l.Path)
		if err == nil {
			var so string
			if so, err = p.storageObject(dev, l.Serial); err == nil {
				out["lun_"+strconv.Itoa(l.LUN)] = so
				continue
			}
		}
		*errs = append(*errs, fmt.Sprintf("LUN %d: %v", l.LUN, err))
	}
	return out
}

// targetLUNLinks removes the LUNs that go or point elsewhere, then makes
// the missing ones (a LUN's object cannot be swapped in place).
func (p *pass) targetLUNLinks(dir string, luns map[string]string) error {
	c := p.cfs
	for _, n := range c.names(filepath.Join(dir, "lun")) {
		ldir := filepath.Join(dir, "lun", n)
		so, ok := luns[n]
		links := c.links(ldir)
		if ok && len(links) == 1 && slices.Contains(mapValues(links), so) {
			continue
		}
		if err := p.unmapLUN(dir, n); err != nil {
			return err
		}
		if err := p.removeLUN(ldir); err != nil {
			return err
		}
	}
	for _, n := range sortedKeys(luns) {
		ldir := filepath.Join(dir, "lun", n)
		if err := c.mkdir(ldir); err != nil {
			return err
		}
		if err := c.link(luns[n], filepath.Join(ldir, filepath.Base(luns[n]))); err != nil {
			return err
		}
	}
	return nil
}

// unmapLUN removes every initiator's mapping of a TPG LUN.
func (p *pass) unmapLUN(dir, lun string) error {
	for _, acl := range p.cfs.names(filepath.Join(dir, "acls")) {
		if err := p.removeMappedLUN(filepath.Join(dir, "acls", acl, lun)); err != nil {
			return err
		}
	}
	return nil
}

// targetACLs removes the initiators no longer let in and the mappings of
// LUNs that go; targetACLMappings adds the rest once the LUNs exist.
func (p *pass) targetACLs(t Target, dir string, luns map[string]string) error {
	c := p.cfs
	for _, acl := range c.names(filepath.Join(dir, "acls")) {
		adir := filepath.Join(dir, "acls", acl)
		if !slices.Contains(t.InitiatorACLs, acl) {
			if err := p.removeACL(adir); err != nil {
				return err
			}
			continue
		}
		for _, n := range c.names(adir) {
			if _, ok := luns[n]; strings.HasPrefix(n, "lun_") && !ok {
				if err := p.removeMappedLUN(filepath.Join(adir, n)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (p *pass) targetACLMappings(t Target, dir string, luns map[string]string) error {
	c := p.cfs
	for _, acl := range t.InitiatorACLs {
		adir := filepath.Join(dir, "acls", acl)
		if err := c.mkdir(adir); err != nil {
			return err
		}
		for _, n := range sortedKeys(luns) {
			if err := c.mkdir(filepath.Join(adir, n)); err != nil {
				return err
			}
			if err := c.link(filepath.Join(dir, "lun", n), filepath.Join(adir, n, "lun")); err != nil {
				return err
			}
		}
		if err := p.chap(filepath.Join(adir, "auth"), t.CHAP); err != nil {
			return err
		}
	}
	return nil
}

func (p *pass) targetPortals(t Target, dir string) error {
	c := p.cfs
	want := map[string]bool{}
	for _, pt := range t.Portals {
		want[pt.dir()] = true
	}
	for _, np := range c.names(filepath.Join(dir, "np")) {
		if !want[np] {
			if err := c.rmdir(filepath.Join(dir, "np", np)); err != nil {
				return err
			}
		}
	}
	for _, pt := range t.Portals {
		if err := c.mkdir(filepath.Join(dir, "np", pt.dir())); err != nil {
			return err
		}
	}
	return nil
}

// targetAuth sets the TPG's attributes: demo mode (any initiator, all
// LUNs writable) without ACLs, and CHAP on the TPG for demo mode (the
// ACLs carry their own).
func (p *pass) targetAuth(t Target, dir string) error {
	demo := len(t.InitiatorACLs) == 0 && !t.Closed
	attrs := [][2]string{
		{"authentication", boolAttr(t.CHAP != nil)},
		{"generate_node_acls", boolAttr(demo)},
		{"cache_dynamic_acls", boolAttr(demo)},
		{"demo_mode_write_protect", "0"},
	}
	for _, a := range attrs {
		if err := p.cfs.set(filepath.Join(dir, "attrib", a[0]), a[1]); err != nil {
			return err
		}
	}
	if demo {
		return p.chap(filepath.Join(dir, "auth"), t.CHAP)
	}
	return nil
}

// chap writes (or clears) CHAP credentials in an auth/ group. LIO clears
// a credential when "NULL" is written (and then shows "NULL").
func (p *pass) chap(dir string, c *CHAP) error {
	var v CHAP
	if c != nil {
		v = *c
	}
	for _, a := range [][2]string{{"userid", v.User}, {"password", v.Secret}, {"userid_mutual", v.MutualUser}, {"password_mutual", v.MutualSecret}} {
		file, want := filepath.Join(dir, a[0]), a[1]
		if want == "" {
			if cur := p.cfs.attr(file); cur == "" || cur == "NULL" {
				continue
			}
			want = "NULL"
		}
		if err := p.cfs.writeSecret(file, want); err != nil {
			return err
		}
	}
	return nil
}

func boolAttr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
