package kernel

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// NFS: each owner's exports go to <ExportsDir>/switchyard-<owner>.exports
// (exports(5) lines), which `exportfs -ra` reads with /etc/exports. nfsd
// (its filesystem, rpcbind, rpc.mountd, rpc.nfsd) starts with the first
// export.

const (
	defaultClient     = "127.0.0.0/8"
	defaultExportOpts = "rw,sync,no_root_squash,no_subtree_check"
)

var clientRE = regexp.MustCompile(`^([^()\s]+)(?:\(([^()\s]*)\))?$`)

// exportClients renders an export's clients as exports(5) host(options),
// each with an fsid.
func exportClients(e Export) ([]string, error) {
	spec := e.Options
	if spec == "" {
		spec = defaultExportOpts
	}
	if !strings.Contains(spec, "(") {
		if strings.ContainsAny(spec, " \t") {
			return nil, fmt.Errorf("options %q: a bare option list has no spaces (want host(options) ... or opt,opt)", spec)
		}
		spec = defaultClient + "(" + spec + ")"
	}
	var out []string
	for _, tok := range strings.Fields(spec) {
		m := clientRE.FindStringSubmatch(tok)
		if m == nil {
			return nil, fmt.Errorf("client %q is not host(options)", tok)
		}
		opts := m[2]
		if !hasOption(opts, "fsid") {
			if opts != "" {
				opts += ","
			}
			opts += "fsid=" + strconv.FormatUint(uint64(fsidOf(e.Path)), 10)
		}
		out = append(out, m[1]+"("+opts+")")
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("options %q name no client", e.Options)
	}
	return out, nil
}

func hasOption(opts, name string) bool {
	for _, o := range strings.Split(opts, ",") {
		if k, _, _ := strings.Cut(o, "="); k == name {
			return true
		}
	}
	return false
}

// fsidOf is a stable, non-zero fsid for an export path (fsid=0 means the
// NFSv4 root).
func fsidOf(path string) uint32 {
	id := crc32.ChecksumIEEE([]byte(path)) & 0x7fffffff
	if id == 0 {
		id = 1
	}
	return id
}

// exportLine is one exports(5) line.
func exportLine(e Export) (string, error) {
	clients, err := exportClients(e)
	if err != nil {
		return "", err
	}
	p := e.Path
	if strings.ContainsAny(p, " \t\"") {
		p = `"` + strings.ReplaceAll(p, `"`, `\"`) + `"`
	}
	return p + " " + strings.Join(clients, " "), nil
}

func (p *pass) exportsFile() string {
	return filepath.Join(p.r.o.ExportsDir, exportsPrefix+p.owner+".exports")
}

func (p *pass) nfs() {
	if len(p.old.NFS) == 0 && len(p.new.NFS) == 0 {
		return
	}
	var b bytes.Buffer
	served := 0
	for _, e := range p.new.NFS {
		if p.badMounts[e.Path] {
			continue
		}
		if e.Source == "" {
			if fi, err := os.Stat(e.Path); err != nil || !fi.IsDir() {
				p.fail("nfs export %s: not a directory", e.Path)
				continue
			}
		}
		line, err := exportLine(e)
		if err != nil {
			p.fail("nfs export %s: %v", e.Path, err)
			continue
		}
		if served == 0 {
			fmt.Fprintf(&b, "# NFS exports of %s, written by switchyard's kernel reconciler.\n", p.owner)
		}
		b.WriteString(line + "\n")
		served++
	}
	changed, err := p.writeOrRemove(p.exportsFile(), b.Bytes(), served > 0)
	if err != nil {
		p.fail("nfs exports: %v", err)
		return
	}
	start := served > 0 && !p.r.nfsdReady
	if !changed && !start && !p.r.exportsDirty {
		return
	}
	p.r.exportsDirty = true // until exportfs succeeds
	if served > 0 {
		if err := p.startNFSD(); err != nil {
			p.fail("starting the NFS server: %v", err)
			return
		}
	}
	if _, err := p.exec("exportfs", "-ra"); err != nil {
		p.fail("exportfs -ra: %v", err)
		return
	}
	p.r.exportsDirty = false
	if start {
		if err := p.startNFSThreads(); err != nil {
			p.fail("starting the NFS server: %v", err)
			return
		}
		p.r.nfsdReady = true
	}
}

// writeOrRemove makes file hold data (or not exist when !keep) and says
// whether that changed it.
func (p *pass) writeOrRemove(file string, data []byte, keep bool) (bool, error) {
	old, err := os.ReadFile(file)
	exists := err == nil
	if !keep {
		if !exists {
			return false, nil
		}
		if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
		return true, nil
	}
	if exists && bytes.Equal(old, data) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return false, err
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return false, err
	}
	return true, os.Rename(tmp, file)
}

// startNFSD mounts nfsd's filesystem and starts rpcbind (before exportfs).
func (p *pass) startNFSD() error {
	if !p.r.mountPoints()[p.r.o.NFSD] {
		if _, err := p.exec("mount", "-t", "nfsd", "nfsd", p.r.o.NFSD); err != nil {
			return err
		}
	}
	if !p.running("rpcbind") {
		if _, err := p.exec("rpcbind"); err != nil {
			return err
		}
	}
	return nil
}

// startNFSThreads starts rpc.mountd and the nfsd threads (after
// exportfs), and rpc.statd for NFSv3 locking when it can.
func (p *pass) startNFSThreads() error {
	if !p.running("rpc.mountd") {
		if _, err := p.exec("rpc.mountd"); err != nil {
			return err
		}
	}
	b, _ := os.ReadFile(filepath.Join(p.r.o.NFSD, "threads"))
	if n, _ := strconv.Atoi(strings.TrimSpace(string(b))); n == 0 {
		if _, err := p.exec("rpc.nfsd", strconv.Itoa(p.r.o.NFSThreads)); err != nil {
			return err
		}
	}
	if !p.running("rpc.statd") {
		if _, err := p.exec("rpc.statd"); err != nil {
			// NFSv4 and v3 with nolock work without it.
			p.r.log.Warn("rpc.statd did not start: NFSv3 locking is unavailable", "err", err)
		}
	}
	return nil
}

// running reports whether a process with that exact name runs.
func (p *pass) running(name string) bool {
	_, err := p.exec("pgrep", "-x", name)
	return err == nil
}
