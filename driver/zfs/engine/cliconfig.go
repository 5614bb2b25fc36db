package engine

import (
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// CLIConfig is how a host is driven by the zfs command line: the
// sshConnection.* keys (SSH nil: the commands run locally) and zfs.cli.*.
type CLIConfig struct {
	SSH   *zfs.SSHConfig
	Paths zfs.Paths
	Sudo  bool
}

// ReadCLI reads sshConnection.* and zfs.cli.*, adding their problems to r.
// With needSSH a config without sshConnection is a problem; otherwise it
// means zfs runs on this machine.
func ReadCLI(r *config.Reader, needSSH bool) CLIConfig {
	var c CLIConfig
	if v, ok := r.Tree().Lookup("sshConnection"); ok && v != nil {
		c.SSH = readSSH(r)
	} else if needSSH {
		r.Add("sshConnection", "required: this driver runs zfs on the storage host over SSH")
	}
	c.Sudo = r.Bool("zfs.cli.sudoEnabled", false)
	c.Paths = zfs.Paths{ZFS: r.Str("zfs.cli.paths.zfs"), Zpool: r.Str("zfs.cli.paths.zpool"),
		Sudo: r.Str("zfs.cli.paths.sudo"), Chroot: r.Str("zfs.cli.paths.chroot")}
	return c
}

func readSSH(r *config.Reader) *zfs.SSHConfig {
	c := &zfs.SSHConfig{
		Host:       r.Required("sshConnection.host", "the storage host's address"),
		Username:   r.Required("sshConnection.username", "the user to log in as"),
		Password:   r.Str("sshConnection.password"),
		PrivateKey: r.Str("sshConnection.privateKey"),
		Passphrase: r.Str("sshConnection.passphrase"),
	}
	if p := r.Str("sshConnection.port"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			r.Add("sshConnection.port", "must be a TCP port (1-65535), got %q", p)
		}
		c.Port = n
	}
	if v := r.Str("sshConnection.maxSessions"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			r.Add("sshConnection.maxSessions", "must be a number of sessions from 1 to 1000 (the server's MaxSessions, 10 by default), got %q", v)
		}
		c.MaxSessions = n
	}
	if v := r.Str("sshConnection.keepaliveInterval"); v != "" {
		// democratic-csi (ssh2) takes milliseconds; 0 turns keepalives off.
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			r.Add("sshConnection.keepaliveInterval", "must be milliseconds (0 turns keepalives off), got %q", v)
		}
		c.KeepAlive = time.Duration(n) * time.Millisecond
		if n == 0 {
			c.KeepAlive = -1
		}
	}
	if v := r.Str("sshConnection.readyTimeout"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			r.Add("sshConnection.readyTimeout", "must be milliseconds, got %q", v)
		}
		c.DialTimeout = time.Duration(n) * time.Millisecond
	}
	c.HostKeyFingerprint = r.Str("sshConnection.hostKeyFingerprint")
	if kh := r.Str("sshConnection.knownHosts"); kh != "" {
		c.KnownHosts = kh
		if err := zfs.CheckKnownHostsFile(kh); err != nil {
			r.Add("sshConnection.knownHosts", "%s", strings.TrimPrefix(err.Error(), "sshConnection.knownHosts: "))
		}
	}
	// On by default: one long-lived sh per session slot saves a round trip
	// per command (docs/performance.md); false sends each command as its
	// own exec. (It was off for a while because the fault soak leaked with
	// it; the cause was the one-exec delete's reading of a failed read,
	// which both transports had, fixed in engine/oneshot.go.)
	c.NoShellSession = !r.Bool("sshConnection.shellSession", true)
	if c.Password == "" && c.PrivateKey == "" {
		r.Add("sshConnection", "set password or privateKey")
	}
	return c
}

// SSHWarnings is backend.Type.Warnings for the backends that run zfs over
// SSH: a host key that nothing pins is trusted on first use, which config
// check should say.
func SSHWarnings(cfg config.Tree) []config.Problem {
	c := ReadCLI(config.NewReader(cfg), false)
	if c.SSH == nil {
		return nil
	}
	if w := zfs.HostKeyWarning(*c.SSH); w != "" {
		return []config.Problem{{Key: "sshConnection", Msg: strings.TrimPrefix(w, "sshConnection: "), Warning: true}}
	}
	return nil
}
