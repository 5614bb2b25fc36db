package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/e2e/backends"
)

// The shares of the nfs-client and smb-client rows: datasets of the ZFS
// simulator in the storage VM, shared as an administrator shares them
// (sharenfs, sharesmb: the simulator's --kernel mode serves them through
// the VM's nfsd and Samba), then mounted by the VM's node where its
// controller looks for them (controllerBasePath), as an administrator
// mounts a share for democratic-csi's nfs-client.
const (
	sharesParent = "e2e-clients" // <pool>/e2e-clients/{nfs,smb}
	// nfsShareOptions: the controller writes as root, so root is not
	// squashed (as the zfs-generic-nfs row's datasets).
	nfsShareOptions = "rw,no_subtree_check,no_root_squash"
	// guestMounts is the share's mounts folder as the VM sees it (/lab is
	// the VM's 9p share, the folder vmnode.json is in).
	guestMounts = "/lab/mounts"
)

// shareRunner runs one shell command on the ZFS host.
type shareRunner func(ctx context.Context, cmd string) (string, error)

// makeShares makes (or finds) the two datasets with their share
// properties, asks the VM's node to mount them under mountRoot through
// requests in mountsDir (lab/cluster files/vm-mounts.sh answers), and
// returns what the rows need. Every step is idempotent: a kept cluster
// runs it again.
func makeShares(ctx context.Context, run shareRunner, z *backends.ZFSHost, mountsDir, mountRoot string, wait time.Duration) (*backends.ShareClients, error) {
	pool := z.Pool
	if pool == "" {
		pool = "tank"
	}
	nfsDS, smbDS := pool+"/"+sharesParent+"/nfs", pool+"/"+sharesParent+"/smb"
	mountpoints := map[string]string{}
	for ds, prop := range map[string]string{nfsDS: "sharenfs=" + nfsShareOptions, smbDS: "sharesmb=on"} {
		if out, err := run(ctx, "zfs create -p "+ds); err != nil && !strings.Contains(out, "already exists") {
			return nil, fmt.Errorf("zfs create %s: %v: %s", ds, err, strings.TrimSpace(out))
		}
		if out, err := run(ctx, "zfs set "+shQuote(prop)+" "+ds); err != nil {
			return nil, fmt.Errorf("zfs set %s %s: %v: %s", prop, ds, err, strings.TrimSpace(out))
		}
		out, err := run(ctx, "zfs get -H -o value mountpoint "+ds)
		mp := strings.TrimSpace(out)
		if err != nil || !strings.HasPrefix(mp, "/") {
			return nil, fmt.Errorf("the mountpoint of %s: %v: %s", ds, err, mp)
		}
		mountpoints[ds] = mp
	}
	c := &backends.ShareClients{
		NFSExport: mountpoints[nfsDS], NFSMount: mountRoot + "/clients-nfs",
		SMBShare: smbShareName(smbDS), SMBPath: mountpoints[smbDS], SMBMount: mountRoot + "/clients-smb",
	}
	// The SMB account in a credentials file (mount.cifs reads it), never
	// on a command line; the share is readable by root only.
	if err := os.MkdirAll(mountsDir, 0o700); err != nil {
		return nil, err
	}
	cred := filepath.Join(mountsDir, "clients-smb.cred")
	if err := os.WriteFile(cred, []byte("username="+z.User+"\npassword="+z.Password+"\n"), 0o600); err != nil {
		return nil, err
	}
	reqs := []struct{ name, body string }{
		{"clients-nfs", "type=nfs\nsource=127.0.0.1:" + c.NFSExport + "\ntarget=" + c.NFSMount + "\n"},
		{"clients-smb", "type=cifs\nsource=//127.0.0.1/" + c.SMBShare + "\ntarget=" + c.SMBMount + "\noptions=credentials=" + guestMounts + "/clients-smb.cred\n"},
	}
	for _, r := range reqs {
		if err := requestMount(ctx, mountsDir, r.name, r.body, wait); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// requestMount writes one request and waits for its answer.
func requestMount(ctx context.Context, dir, name, body string, wait time.Duration) error {
	rc, out := filepath.Join(dir, name+".rc"), filepath.Join(dir, name+".out")
	for _, p := range []string{rc, out} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	// Written aside and renamed: the VM's loop never reads half a request.
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name+".req")); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(rc); err == nil && strings.TrimSpace(string(b)) != "" {
			msg, _ := os.ReadFile(out)
			if code := strings.TrimSpace(string(b)); code != "0" {
				return fmt.Errorf("the storage VM's node could not mount %s (exit %s): %s", name, code, strings.TrimSpace(string(msg)))
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the storage VM's node did not answer the mount request %s within %s (is vm-node.sh running? see its logs/mounts.log)", name, wait)
		case <-tick.C:
		}
	}
}

// smbShareName is the name OpenZFS's libshare gives a sharesmb=on
// dataset on Linux: the dataset name with '/', '-', ':' and ' ' as '_'.
func smbShareName(ds string) string {
	return strings.NewReplacer("/", "_", "-", "_", ":", "_", " ", "_").Replace(ds)
}

// shQuote quotes s for the ZFS host's POSIX shell.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
