package kernel

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SMB: one smbd with its own smb.conf under <StateDir>/samba, which
// includes shares/<owner>.conf per owner; Samba's state (pid file, tdbs,
// passdb, logs) stays in that directory too, so the distribution's
// configuration is never touched. smbd starts with the first share and
// reloads its configuration after a change.

func (r *Reconciler) sambaDir(parts ...string) string {
	return filepath.Join(append([]string{r.o.StateDir, "samba"}, parts...)...)
}

func (r *Reconciler) smbConf() string { return r.sambaDir("smb.conf") }

// mainConf is smb.conf: a standalone server, users from its own passdb,
// unknown users mapped to guest (for guest shares), then the owners' shares.
func (r *Reconciler) mainConf(includes []string) []byte {
	var b bytes.Buffer
	d := r.sambaDir()
	fmt.Fprintf(&b, `# Written by switchyard's kernel reconciler; shares come from the includes.
[global]
   workgroup = WORKGROUP
   server role = standalone server
   server min protocol = SMB2
   smb ports = 445
   disable netbios = yes
   load printers = no
   printing = bsd
   printcap name = /dev/null
   disable spoolss = yes
   passdb backend = tdbsam
   map to guest = bad user
   guest account = nobody
   pid directory = %[1]s/run
   lock directory = %[1]s/lock
   state directory = %[1]s/state
   cache directory = %[1]s/cache
   private dir = %[1]s/private
   ncalrpc dir = %[1]s/ncalrpc
   log file = %[1]s/log/log.%%m
   log level = 1
`, d)
	for _, inc := range includes {
		fmt.Fprintf(&b, "include = %s\n", inc)
	}
	return b.Bytes()
}

// shareSection renders one share. The data directories belong to the
// simulator, and SMB clients' chmod/chown land in its model, not on disk:
// files are therefore written as root unless Options say otherwise.
func shareSection(sh Share, path string) string {
	opts := map[string]string{"read only": "no", "force user": "root", "force group": "root", "browseable": "yes"}
	if sh.Guest {
		opts["guest ok"], opts["guest only"] = "yes", "yes"
	} else {
		opts["guest ok"] = "no"
	}
	for k, v := range sh.Options {
		opts[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	delete(opts, "path")
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "[%s]\n   path = %s\n", sh.Name, path)
	for _, k := range keys {
		fmt.Fprintf(&b, "   %s = %s\n", k, opts[k])
	}
	return b.String()
}

func (p *pass) smb() {
	if len(p.old.SMB) == 0 && len(p.new.SMB) == 0 {
		return
	}
	r := p.r
	var b bytes.Buffer
	served := 0
	for _, sh := range p.new.SMB {
		if p.badMounts[sh.Path] {
			continue
		}
		if sh.Source == "" {
			if fi, err := os.Stat(sh.Path); err != nil || !fi.IsDir() {
				p.fail("smb share %s: %s is not a directory", sh.Name, sh.Path)
				continue
			}
		}
		if served == 0 {
			fmt.Fprintf(&b, "# SMB shares of %s, written by switchyard's kernel reconciler.\n", p.owner)
		}
		b.WriteString(shareSection(sh, sh.Path))
		served++
	}
	changed, err := p.writeOrRemove(r.sambaDir("shares", p.owner+".conf"), b.Bytes(), served > 0)
	if err != nil {
		p.fail("smb shares: %v", err)
		return
	}
	includes, _ := filepath.Glob(r.sambaDir("shares", "*.conf"))
	sort.Strings(includes)
	mainChanged, err := p.writeOrRemove(r.smbConf(), r.mainConf(includes), true)
	if err != nil {
		p.fail("smb.conf: %v", err)
		return
	}
	if changed || mainChanged {
		r.smbDirty = true // until smbd has read it
	}
	switch {
	case len(includes) > 0 && !r.smbdRunning():
		if err := p.startSMBD(); err != nil {
			p.fail("starting smbd: %v", err)
			return
		}
		r.smbDirty = false
	case r.smbDirty && r.smbdRunning():
		// Another simulator in this VM may have started smbd: its accounts
		// are there, this process's not yet (smbpasswd -a is safe while
		// smbd runs).
		if err := p.smbUsers(); err != nil {
			p.fail("SMB users: %v", err)
			return
		}
		if _, err := p.exec("smbcontrol", "--configfile="+r.smbConf(), "smbd", "reload-config"); err != nil {
			p.fail("smbcontrol smbd reload-config: %v", err)
			return
		}
		r.smbDirty = false
	}
}

// smbdRunning reads smbd's pid file and checks the process.
func (r *Reconciler) smbdRunning() bool {
	b, err := os.ReadFile(r.sambaDir("run", "smbd.pid"))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return false
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func (p *pass) startSMBD() error {
	r := p.r
	for _, d := range []string{"run", "lock", "state", "cache", "private", "ncalrpc", "log"} {
		if err := os.MkdirAll(r.sambaDir(d), 0o755); err != nil {
			return err
		}
	}
	if err := os.Chmod(r.sambaDir("private"), 0o700); err != nil {
		return err
	}
	if err := p.smbUsers(); err != nil {
		return err
	}
	if _, err := p.exec("smbd", "-D", "--configfile="+r.smbConf()); err != nil {
		return err
	}
	return r.waitSMB()
}

// smbUsers creates the SMB accounts: a Unix user (no home, no login
// shell) and its Samba password, given on stdin, never in arguments.
func (p *pass) smbUsers() error {
	r := p.r
	if r.smbUsers || len(r.o.SMBUsers) == 0 {
		return nil
	}
	names := make([]string, 0, len(r.o.SMBUsers))
	for n := range r.o.SMBUsers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := p.exec("id", "-u", n); err != nil {
			if _, err := p.exec("useradd", "-M", "-s", "/usr/sbin/nologin", n); err != nil {
				return fmt.Errorf("SMB user %s: %w", n, err)
			}
		}
		pw := r.o.SMBUsers[n]
		if _, err := p.execIn([]byte(pw+"\n"+pw+"\n"), "smbpasswd", "-c", r.smbConf(), "-s", "-a", n); err != nil {
			return fmt.Errorf("SMB user %s: %w", n, err)
		}
	}
	r.smbUsers = true
	return nil
}

// waitSMB waits until smbd accepts connections on Options.SMBAddr (it
// forks before listening).
func (r *Reconciler) waitSMB() error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", r.o.SMBAddr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("smbd does not listen on %s after 15 s (see %s): %v", r.o.SMBAddr, r.sambaDir("log"), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
