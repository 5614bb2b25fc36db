package storage

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// Replication to another system, as zettarepl does it for a PUSH task
// with the SSH transport: the source logs in to the remote host with the
// keychain's SSH_CREDENTIALS (its key pair, checking the remote host key
// it holds), asks the remote's zfs which snapshots the target has, and
// pipes its own `zfs send` into `zfs recv` run over that SSH session. In
// the lab the remote is another simulator's SSH endpoint (a real SSH
// server whose zfs is that simulator's model), so the stream crosses a
// real SSH connection between two systems. PULL and SSH+NETCAT's
// separate data connection are not simulated: both run as PUSH over SSH.

// remote is an SSH session factory to the replication target.
type remote struct {
	c    *ssh.Client
	host string
}

// dialRemote logs in with the credential the task names.
func (s *service) dialRemote(a args) (*remote, error) {
	id, _ := a.int("ssh_credentials")
	cred, err := s.keys.get(id, "SSH_CREDENTIALS")
	if err != nil {
		return nil, err
	}
	kpID, _ := cred.int("private_key")
	kp, err := s.keys.get(kpID, "SSH_KEY_PAIR")
	if err != nil {
		return nil, middleware.Errorf(middleware.EFAULT, "SSH credentials %d: key pair %d: %v", id, kpID, err)
	}
	signer, err := ssh.ParsePrivateKey([]byte(kp.str("private_key")))
	if err != nil {
		return nil, middleware.Errorf(middleware.EFAULT, "SSH key pair %d: invalid private key: %v", kpID, err)
	}
	known, err := hostKeys(cred.str("remote_host_key"))
	if err != nil {
		return nil, middleware.Errorf(middleware.EFAULT, "SSH credentials %d: remote_host_key: %v", id, err)
	}
	port, _ := cred.int("port")
	timeout, _ := cred.int("connect_timeout")
	addr := net.JoinHostPort(cred.str("host"), strconv.FormatInt(port, 10))
	c, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{
		User: cred.str("username"),
		Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: func(_ string, _ net.Addr, k ssh.PublicKey) error {
			for _, w := range known {
				if bytes.Equal(w.Marshal(), k.Marshal()) {
					return nil
				}
			}
			return fmt.Errorf("the host key of %s is not the remote_host_key of the credential", addr)
		},
		Timeout: time.Duration(max(timeout, 1)) * time.Second,
	})
	if err != nil {
		return nil, middleware.Errorf(middleware.EFAULT, "Failed to connect to %s: %v", addr, err)
	}
	return &remote{c: c, host: addr}, nil
}

// hostKeys parses remote_host_key: ssh-keyscan lines ("host type key")
// or authorized-key lines ("type key").
func hostKeys(text string) ([]ssh.PublicKey, error) {
	var out []ssh.PublicKey
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		for len(f) >= 2 {
			if k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(strings.Join(f, " "))); err == nil {
				out = append(out, k)
				break
			}
			f = f[1:]
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no host key in %q", text)
	}
	return out, nil
}

// run runs cmd on the remote with stdin, returning its stdout; a failure
// carries the remote's stderr, as zettarepl reports it.
func (r *remote) run(cmd string, stdin io.Reader) (string, error) {
	sess, err := r.c.NewSession()
	if err != nil {
		return "", middleware.Errorf(middleware.EFAULT, "SSH session to %s: %v", r.host, err)
	}
	defer func() { _ = sess.Close() }()
	var out, errb bytes.Buffer
	sess.Stdin, sess.Stdout, sess.Stderr = stdin, &out, &errb
	if err := sess.Run(cmd); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return out.String(), middleware.Errorf(middleware.EFAULT, "%s", msg)
	}
	return out.String(), nil
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// runOnetimeSSH is run_onetime with a remote target.
func (s *service) runOnetimeSSH(c *middleware.Call, a args) (any, error) {
	r, err := s.dialRemote(a)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.c.Close() }()
	match := snapshotMatcher(a)
	return nil, s.eachSource(c, a, "Replicating to "+r.host, func(ds, dst string, top bool) error {
		return s.pushDataset(r, a, ds, dst, match, top)
	})
}

// pushDataset brings the remote dst up to date with src's matching
// snapshots: a full stream when dst is new, else incremental from the
// newest snapshot both have.
func (s *service) pushDataset(r *remote, a args, src, dst string, match func(string) bool, top bool) error {
	_, snaps, err := s.matchingSnapshots(src, match, top)
	if err != nil || len(snaps) == 0 {
		return err
	}
	out, lerr := r.run("zfs list -H -o name -t snapshot -d 1 "+shq(dst), nil)
	exists := lerr == nil
	if lerr != nil && !strings.Contains(lerr.Error(), "does not exist") {
		return lerr
	}
	have := map[string]bool{}
	for _, l := range strings.Fields(out) {
		_, n, _ := strings.Cut(l, "@")
		have[n] = true
	}
	if exists && a.boolean("only_from_scratch") {
		return middleware.Errorf(middleware.EFAULT, "Target dataset %s already exists", pyRepr(dst))
	}
	sopts := zfsmodel.SendOptions{Props: a.boolean("properties")}
	recv := s.recvCommand(a, dst)
	last := src + "@" + snaps[len(snaps)-1]
	if exists {
		base := -1
		for i, n := range snaps {
			if have[n] {
				base = i
			}
		}
		switch {
		case base == len(snaps)-1:
			return nil
		case base >= 0:
			sopts.From, sopts.Intermediates = "@"+snaps[base], true
			return s.pushStream(r, last, sopts, recv)
		case a.boolean("allow_from_scratch"):
			if _, err := r.run("zfs destroy -r "+shq(dst), nil); err != nil {
				return err
			}
		default:
			return middleware.Errorf(middleware.EFAULT, "No incremental base on dataset %s and replication from scratch is not allowed", pyRepr(src))
		}
	}
	if err := s.pushStream(r, src+"@"+snaps[0], sopts, recv); err != nil {
		return err
	}
	if len(snaps) > 1 {
		sopts.From, sopts.Intermediates = "@"+snaps[0], true
		if err := s.pushStream(r, last, sopts, recv); err != nil {
			return err
		}
	}
	if a.str("readonly") == "SET" {
		if _, err := r.run("zfs set readonly=on "+shq(dst), nil); err != nil {
			return err
		}
	}
	s.log.Debug("replicated over SSH", "source", src, "remote", r.host, "target", dst, "snapshots", len(snaps))
	return nil
}

// recvCommand is the remote `zfs recv` of a task: resumable, forced
// (the target's own changes since the base are rolled back), with the
// task's property exclusions and overrides.
func (s *service) recvCommand(a args, dst string) string {
	cmd := []string{"zfs", "recv", "-s", "-F"}
	if !a.boolean("mount") {
		cmd = append(cmd, "-u")
	}
	excl, _ := a["properties_exclude"].([]any)
	for _, x := range excl {
		if p, ok := x.(string); ok {
			cmd = append(cmd, "-x", shq(p))
		}
	}
	if a.boolean("properties") && a.boolean("exclude_mountpoint_property") {
		cmd = append(cmd, "-x", "mountpoint")
	}
	for k, v := range a.sub("properties_override") {
		cmd = append(cmd, "-o", shq(k+"="+jsonScalar(v)))
	}
	return strings.Join(append(cmd, shq(dst)), " ")
}

// pushStream pipes the model's send of snap into recv on the remote.
func (s *service) pushStream(r *remote, snap string, sopts zfsmodel.SendOptions, recv string) error {
	pr, pw := io.Pipe()
	sent := make(chan error, 1)
	go func() {
		err := s.m.Send(pw, snap, sopts, nil)
		pw.CloseWithError(err)
		sent <- err
	}()
	_, rerr := r.run(recv, pr)
	pr.CloseWithError(fmt.Errorf("remote receive ended"))
	serr := <-sent
	switch {
	case serr != nil && rerr == nil:
		return callErrFull("", serr)
	case rerr != nil:
		return rerr
	}
	return nil
}
