package vmprobe

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const smbConf = `[global]
   workgroup = WORKGROUP
   server role = standalone server
   server min protocol = SMB2
   interfaces = lo
   bind interfaces only = yes
   smb ports = 445
   disable netbios = yes
   load printers = no
   printing = bsd
   printcap name = /dev/null
   disable spoolss = yes
   passdb backend = tdbsam
   log file = /var/log/samba/log.%m
[probe]
   path = SHARE
   read only = no
   valid users = probeuser
`

// TestSMB shares a directory with smbd on 127.0.0.1:445 and mounts it with
// the kernel cifs client and a user's password, as the smb attacher does.
func TestSMB(t *testing.T) {
	inVM(t)
	// Not t.TempDir(): smbd serves as the user, who cannot enter its 0700 parent.
	share, err := os.MkdirTemp("/srv", "probe-smb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(share) })
	for _, d := range []string{"/run/samba", "/var/lib/samba/private", "/var/log/samba", "/var/cache/samba"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile("/etc/samba/smb.conf", []byte(strings.Replace(smbConf, "SHARE", share, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := try("id", "probeuser"); err != nil {
		run(t, "useradd", "-M", "-s", "/usr/sbin/nologin", "probeuser")
	}
	run(t, "sh", "-c", "printf 'probepass\\nprobepass\\n' | smbpasswd -a -s probeuser")
	run(t, "chown", "probeuser:probeuser", share)
	run(t, "smbd", "-D")
	t.Cleanup(func() {
		if pid := readTrim("/run/samba/smbd.pid"); pid != "" {
			try("kill", pid)
		}
	})
	waitFor(t, "smbd on 127.0.0.1:445", 30*time.Second, func() string {
		c, err := net.DialTimeout("tcp", "127.0.0.1:445", time.Second)
		if err != nil {
			return ""
		}
		c.Close()
		return "up"
	})

	modprobe(t, "cifs")
	mnt := t.TempDir()
	run(t, "mount", "-t", "cifs", "//127.0.0.1/probe", mnt, "-o", "username=probeuser,password=probepass,vers=3.1.1")
	unmount := func() { try("umount", mnt) }
	t.Cleanup(unmount)
	if opts := mountOptions(mnt); !strings.Contains(opts, "vers=3.1.1") {
		t.Errorf("the cifs mount's options %q lack vers=3.1.1", opts)
	}
	want := "written over SMB\n"
	if err := os.WriteFile(filepath.Join(mnt, "probe.txt"), []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "umount", mnt)
	got, err := os.ReadFile(filepath.Join(share, "probe.txt"))
	if err != nil || string(got) != want {
		t.Fatalf("server side probe.txt = %q, %v; want %q", got, err, want)
	}
	// smbd wrote it as the authenticated user, not as root.
	if owner := strings.TrimSpace(run(t, "stat", "-c", "%U", filepath.Join(share, "probe.txt"))); owner != "probeuser" {
		t.Errorf("server side probe.txt is owned by %q, want probeuser", owner)
	}
}
