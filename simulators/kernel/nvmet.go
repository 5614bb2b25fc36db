package kernel

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// nvmet's configfs tree (drivers/nvme/target/configfs.c): subsystems/<nqn>
// with attr_* files, namespaces/<nsid> and allowed_hosts/<host> links;
// hosts/<nqn>; ports/<id> with addr_* files and subsystems/<nqn> links.

func (p *pass) nvmetDir(parts ...string) string {
	return filepath.Join(append([]string{p.r.o.ConfigFS, "nvmet"}, parts...)...)
}

func (p *pass) nvmet() {
	if len(p.old.NVMe) == 0 && len(p.new.NVMe) == 0 {
		return
	}
	want := map[string]bool{}
	for _, sub := range p.new.NVMe {
		want[sub.NQN] = true
	}
	for _, sub := range p.old.NVMe {
		if !want[sub.NQN] {
			if err := p.removeSubsystem(sub.NQN); err != nil {
				p.fail("removing nvme subsystem %s: %v", sub.NQN, err)
			}
		}
	}
	for _, sub := range p.new.NVMe {
		if err := p.ensureSubsystem(sub); err != nil {
			p.fail("nvme subsystem %s: %v", sub.NQN, err)
		}
	}
	p.linkPorts()
	p.dropUnusedHosts()
	p.dropUnusedPorts()
}

// removeSubsystem takes it off every port, disables and removes its
// namespaces, drops its host links and removes it.
func (p *pass) removeSubsystem(nqn string) error {
	c := p.cfs
	for _, id := range c.names(p.nvmetDir("ports")) {
		if err := c.unlink(p.nvmetDir("ports", id, "subsystems", nqn)); err != nil {
			return err
		}
	}
	dir := p.nvmetDir("subsystems", nqn)
	for _, ns := range c.names(filepath.Join(dir, "namespaces")) {
		if err := p.removeNamespace(filepath.Join(dir, "namespaces", ns)); err != nil {
			return err
		}
	}
	for h := range c.links(filepath.Join(dir, "allowed_hosts")) {
		if err := c.unlink(filepath.Join(dir, "allowed_hosts", h)); err != nil {
			return err
		}
	}
	return c.rmdir(dir)
}

func (p *pass) removeNamespace(dir string) error {
	if p.cfs.attr(filepath.Join(dir, "enable")) == "1" {
		if err := p.cfs.write(filepath.Join(dir, "enable"), "0"); err != nil {
			return err
		}
	}
	return p.cfs.rmdir(dir)
}

func (p *pass) ensureSubsystem(sub Subsystem) error {
	c := p.cfs
	dir := p.nvmetDir("subsystems", sub.NQN)
	if err := c.mkdir(dir); err != nil {
		return err
	}
	if err := p.subsystemHosts(dir, sub); err != nil {
		return err
	}
	if sub.Serial != "" {
		if err := c.set(filepath.Join(dir, "attr_serial"), sub.Serial); err != nil {
			return err
		}
	}
	want := map[string]bool{}
	for _, ns := range sub.Namespaces {
		want[strconv.Itoa(ns.NSID)] = true
	}
	for _, n := range c.names(filepath.Join(dir, "namespaces")) {
		if !want[n] {
			if err := p.removeNamespace(filepath.Join(dir, "namespaces", n)); err != nil {
				return err
			}
		}
	}
	var errs []string
	for _, ns := range sub.Namespaces {
		if err := p.ensureNamespace(filepath.Join(dir, "namespaces", strconv.Itoa(ns.NSID)), ns); err != nil {
			errs = append(errs, fmt.Sprintf("namespace %d: %v", ns.NSID, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// subsystemHosts sets who may connect. nvmet refuses allow_any_host=1
// while hosts are linked, and host links while it is 1: the order matters.
func (p *pass) subsystemHosts(dir string, sub Subsystem) error {
	c := p.cfs
	hostsDir := filepath.Join(dir, "allowed_hosts")
	current := c.links(hostsDir)
	for h := range current {
		if !slices.Contains(sub.Hosts, h) {
			if err := c.unlink(filepath.Join(hostsDir, h)); err != nil {
				return err
			}
		}
	}
	if sub.AllowAnyHost {
		return c.set(filepath.Join(dir, "attr_allow_any_host"), "1")
	}
	if err := c.set(filepath.Join(dir, "attr_allow_any_host"), "0"); err != nil {
		return err
	}
	for _, h := range sub.Hosts {
		host := p.nvmetDir("hosts", h)
		if !c.exists(host) {
			if err := c.mkdir(host); err != nil {
				return err
			}
			if !slices.Contains(p.l.Hosts, h) {
				p.l.Hosts = append(p.l.Hosts, h)
			}
		}
		if err := c.link(host, filepath.Join(hostsDir, h)); err != nil {
			return err
		}
	}
	return nil
}

// ensureNamespace points the namespace at its device and enables it.
// device_path, device_uuid and device_nguid can only change while the
// namespace is disabled.
func (p *pass) ensureNamespace(dir string, ns Namespace) error {
	c := p.cfs
	dev, err := p.device(ns.Path)
	if err != nil {
		if c.exists(dir) {
			if rerr := p.removeNamespace(dir); rerr != nil {
				return fmt.Errorf("%v; removing the namespace: %v", err, rerr)
			}
			return fmt.Errorf("%v (namespace removed until it can be served)", err)
		}
		return err
	}
	if err := c.mkdir(dir); err != nil {
		return err
	}
	enabled := c.attr(filepath.Join(dir, "enable")) == "1"
	type change struct{ attr, value string }
	var changes []change
	if c.attr(filepath.Join(dir, "device_path")) != dev {
		changes = append(changes, change{"device_path", dev})
	}
	if ns.UUID != "" && c.attr(filepath.Join(dir, "device_uuid")) != ns.UUID {
		changes = append(changes, change{"device_uuid", ns.UUID})
	}
	if ns.NGUID != "" && c.attr(filepath.Join(dir, "device_nguid")) != ns.NGUID {
		changes = append(changes, change{"device_nguid", ns.NGUID})
	}
	if len(changes) > 0 && enabled {
		if err := c.write(filepath.Join(dir, "enable"), "0"); err != nil {
			return err
		}
		enabled = false
	}
	for _, ch := range changes {
		if err := c.write(filepath.Join(dir, ch.attr), ch.value); err != nil {
			return err
		}
	}
	if !enabled {
		return c.write(filepath.Join(dir, "enable"), "1")
	}
	return nil
}

// revalidate tells nvmet about every enabled namespace (any owner's) on
// a loop device that was just resized; hosts then see the new size.
func (p *pass) revalidate() {
	if len(p.resized) == 0 {
		return
	}
	for _, sub := range p.cfs.names(p.nvmetDir("subsystems")) {
		nsDir := p.nvmetDir("subsystems", sub, "namespaces")
		for _, ns := range p.cfs.names(nsDir) {
			dir := filepath.Join(nsDir, ns)
			if p.resized[p.cfs.attr(filepath.Join(dir, "device_path"))] && p.cfs.attr(filepath.Join(dir, "enable")) == "1" {
				if err := p.cfs.write(filepath.Join(dir, "revalidate_size"), "1"); err != nil {
					p.fail("nvme subsystem %s: namespace %s: %v", sub, ns, err)
				}
			}
		}
	}
}

// port is an nvmet port as configfs shows it.
type port struct {
	id, key string
}

// ports reads the existing TCP ports, keyed like Listener.key.
func (p *pass) ports() []port {
	var out []port
	for _, id := range p.cfs.names(p.nvmetDir("ports")) {
		dir := p.nvmetDir("ports", id)
		if p.cfs.attr(filepath.Join(dir, "addr_trtype")) != "tcp" {
			continue
		}
		svc, err := strconv.Atoi(p.cfs.attr(filepath.Join(dir, "addr_trsvcid")))
		if err != nil {
			continue
		}
		out = append(out, port{id: id, key: Listener{Addr: p.cfs.attr(filepath.Join(dir, "addr_traddr")), Port: svc}.key()})
	}
	return out
}

// portFor finds the port serving a listener or makes one (with the
// lowest free id) and records it as ours.
func (p *pass) portFor(l Listener, existing []port) (string, []port, error) {
	for _, pt := range existing {
		if pt.key == l.key() {
			return pt.id, existing, nil
		}
	}
	used := map[string]bool{}
	for _, id := range p.cfs.names(p.nvmetDir("ports")) {
		used[id] = true
	}
	id := 1
	for used[strconv.Itoa(id)] {
		id++
	}
	sid := strconv.Itoa(id)
	dir := p.nvmetDir("ports", sid)
	if err := p.cfs.mkdir(dir); err != nil {
		return "", existing, err
	}
	p.l.Ports[l.key()] = id
	fam := "ipv4"
	if strings.Contains(l.Addr, ":") {
		fam = "ipv6"
	}
	for _, a := range [][2]string{{"addr_trtype", "tcp"}, {"addr_adrfam", fam}, {"addr_traddr", l.Addr}, {"addr_trsvcid", strconv.Itoa(l.Port)}} {
		if err := p.cfs.set(filepath.Join(dir, a[0]), a[1]); err != nil {
			return "", existing, err
		}
	}
	return sid, append(existing, port{id: sid, key: l.key()}), nil
}

// linkPorts offers each of the owner's subsystems on exactly its
// listeners' ports (linking a subsystem enables the port: nvmet listens).
func (p *pass) linkPorts() {
	existing := p.ports()
	for _, sub := range p.new.NVMe {
		if !p.cfs.exists(p.nvmetDir("subsystems", sub.NQN)) {
			continue
		}
		want := map[string]bool{}
		for _, l := range sub.Listeners {
			id, ex, err := p.portFor(l, existing)
			existing = ex
			if err != nil {
				p.fail("nvme subsystem %s: port for %s: %v", sub.NQN, l.key(), err)
				continue
			}
			want[id] = true
			if err := p.cfs.link(p.nvmetDir("subsystems", sub.NQN), p.nvmetDir("ports", id, "subsystems", sub.NQN)); err != nil {
				p.fail("nvme subsystem %s: listening on %s: %v", sub.NQN, l.key(), err)
			}
		}
		for _, id := range p.cfs.names(p.nvmetDir("ports")) {
			if !want[id] {
				if err := p.cfs.unlink(p.nvmetDir("ports", id, "subsystems", sub.NQN)); err != nil {
					p.fail("nvme subsystem %s: %v", sub.NQN, err)
				}
			}
		}
	}
}

// dropUnusedPorts removes the ports a reconciler made that no subsystem
// uses any more and no owner wants.
func (p *pass) dropUnusedPorts() {
	wanted := map[string]bool{}
	for _, st := range p.all {
		for _, sub := range st.NVMe {
			for _, l := range sub.Listeners {
				wanted[l.key()] = true
			}
		}
	}
	keys := make([]string, 0, len(p.l.Ports))
	for k := range p.l.Ports {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		dir := p.nvmetDir("ports", strconv.Itoa(p.l.Ports[key]))
		if !p.cfs.exists(dir) {
			delete(p.l.Ports, key)
			continue
		}
		if wanted[key] || len(p.cfs.links(filepath.Join(dir, "subsystems"))) > 0 {
			continue
		}
		if err := p.cfs.rmdir(dir); err != nil {
			p.fail("removing unused nvme port %s: %v", key, err)
			continue
		}
		delete(p.l.Ports, key)
	}
}

// dropUnusedHosts removes the host entries a reconciler made that no
// owner's subsystem allows any more.
func (p *pass) dropUnusedHosts() {
	wanted := map[string]bool{}
	for _, st := range p.all {
		for _, sub := range st.NVMe {
			for _, h := range sub.Hosts {
				wanted[h] = true
			}
		}
	}
	var keep []string
	for _, h := range p.l.Hosts {
		if wanted[h] {
			keep = append(keep, h)
			continue
		}
		if err := p.cfs.rmdir(p.nvmetDir("hosts", h)); err != nil {
			p.fail("removing nvme host %s: %v", h, err)
			keep = append(keep, h)
		}
	}
	p.l.Hosts = keep
}
