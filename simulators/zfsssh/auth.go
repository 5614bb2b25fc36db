package zfsssh

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"path"
	"sort"

	"golang.org/x/crypto/ssh"
)

// User is one login of the simulated host.
type User struct {
	Password       string          // password authentication; empty disables it
	AuthorizedKeys []ssh.PublicKey // public-key authentication
	// Root makes the user uid 0; the user named "root" always is.
	Root bool
	// Sudo lets a non-root user run sudo without a password (NOPASSWD).
	// Others get sudo's "a password is required".
	Sudo bool
	// Shell is the login shell. Default "/bin/sh" (dash wording); "/bin/bash"
	// switches to bash's messages; any other name only changes $0 (so
	// "/bin/csh" lets a driver's csh check be tested).
	Shell string
}

// account is a User as the server sees it.
type account struct {
	name     string
	uid      int
	root     bool
	sudo     bool
	shell    string
	home     string
	password string
	keys     [][]byte
}

// buildAccounts gives root users uid 0 and the others 1000, 1001, ... in
// name order, so ids are stable across restarts.
func buildAccounts(in map[string]User) (map[string]*account, error) {
	if len(in) == 0 {
		return nil, errors.New("zfsssh: Options.Users is empty: no one could log in")
	}
	names := make([]string, 0, len(in))
	for n := range in {
		names = append(names, n)
	}
	sort.Strings(names)
	out := map[string]*account{}
	next := 1000
	for _, n := range names {
		u := in[n]
		if n == "" {
			return nil, errors.New("zfsssh: Options.Users has an empty user name")
		}
		if u.Password == "" && len(u.AuthorizedKeys) == 0 {
			return nil, fmt.Errorf("zfsssh: user %q has neither a password nor an authorized key", n)
		}
		a := &account{name: n, root: u.Root || n == "root", sudo: u.Sudo, shell: u.Shell, password: u.Password}
		if a.shell == "" {
			a.shell = "/bin/sh"
		}
		if a.root {
			a.home = "/root"
		} else {
			a.uid = next
			next++
			a.home = "/home/" + n
		}
		for _, k := range u.AuthorizedKeys {
			a.keys = append(a.keys, k.Marshal())
		}
		out[n] = a
	}
	return out, nil
}

// shellName is $0 of the login shell: sshd runs it under its base name.
func (a *account) shellName() string { return path.Base(a.shell) }

var errAuth = errors.New("authentication failed")

func (s *Server) passwordAuth(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
	a := s.users[c.User()]
	if a == nil || a.password == "" || subtle.ConstantTimeCompare([]byte(a.password), pw) != 1 {
		s.stats.authFailures.Add(1)
		s.log.Info("ssh authentication failed", "user", c.User(), "method", "password", "remote", c.RemoteAddr().String())
		return nil, errAuth
	}
	return &ssh.Permissions{}, nil
}

func (s *Server) publicKeyAuth(c ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	if a := s.users[c.User()]; a != nil {
		k := key.Marshal()
		for _, ak := range a.keys {
			if bytes.Equal(ak, k) {
				return &ssh.Permissions{}, nil
			}
		}
	}
	// Clients offer keys one by one; only count a refusal, not the attempt.
	s.stats.authFailures.Add(1)
	s.log.Info("ssh authentication failed", "user", c.User(), "method", "publickey", "remote", c.RemoteAddr().String())
	return nil, errAuth
}
