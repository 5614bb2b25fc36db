package zfs

import (
	"context"
	"fmt"
	"strings"
)

// Paths are the programs on the storage host (zfs.cli.paths).
type Paths struct {
	ZFS, Zpool, Sudo, Chroot string
}

// DefaultPaths are democratic-csi's defaults.
var DefaultPaths = Paths{ZFS: "/sbin/zfs", Zpool: "/sbin/zpool", Sudo: "/usr/bin/sudo", Chroot: "/usr/sbin/chroot"}

// CLI runs zfs and zpool on one host through an Executor.
type CLI struct {
	Exec  Executor
	Paths Paths
	// Sudo prefixes zfs and zpool with Paths.Sudo (zfs.cli.sudoEnabled).
	Sudo bool

	// old is what the host's zfs was found to lack (props_oldzfs.go).
	old oldZFS
}

// Prop is one property assignment; order is kept so commands are
// deterministic (and user properties are written before system ones, as
// democratic-csi does, so a user value can never override them).
type Prop struct{ Name, Value string }

func (c *CLI) paths() Paths {
	p := c.Paths
	d := DefaultPaths
	if p.ZFS == "" {
		p.ZFS = d.ZFS
	}
	if p.Zpool == "" {
		p.Zpool = d.Zpool
	}
	if p.Sudo == "" {
		p.Sudo = d.Sudo
	}
	if p.Chroot == "" {
		p.Chroot = d.Chroot
	}
	return p
}

// argv prefixes prog (a path) with sudo when enabled.
func (c *CLI) argv(prog string, args ...string) []string {
	out := make([]string, 0, len(args)+2)
	if c.Sudo {
		out = append(out, c.paths().Sudo)
	}
	return append(append(out, prog), args...)
}

// Do runs argv (already including any sudo) and turns a non-zero exit into
// *Error named by label ("zfs create").
func (c *CLI) Do(ctx context.Context, label string, argv []string, opts RunOptions) (Output, error) {
	out, err := c.Exec.Run(ctx, Line(argv...), opts)
	if err != nil {
		return out, fmt.Errorf("%s: %w", label, err)
	}
	if out.Code != 0 {
		return out, &Error{Command: label, Stderr: firstNonEmpty(out.Stderr, out.Stdout), Code: out.Code}
	}
	return out, nil
}

func firstNonEmpty(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

func (c *CLI) zfs(ctx context.Context, sub string, args ...string) (Output, error) {
	return c.Do(ctx, "zfs "+sub, c.argv(c.paths().ZFS, append([]string{sub}, args...)...), RunOptions{})
}

func propArgs(flag string, props []Prop) []string {
	a := make([]string, 0, 2*len(props))
	for _, p := range props {
		a = append(a, flag, p.Name+"="+p.Value)
	}
	return a
}

// CreateOptions tune Create.
type CreateOptions struct {
	Parents bool  // -p
	Sparse  bool  // -s (zvols without refreservation)
	Volsize int64 // > 0 makes a zvol (-V)
	Props   []Prop
}

// CreateAndGet runs `zfs create` and, when it succeeds, `zfs get` of props
// in the same session (one round trip fewer per new volume).
func (c *CLI) CreateAndGet(ctx context.Context, name string, o CreateOptions, props ...string) (Properties, error) {
	create := c.argv(c.paths().ZFS, append([]string{"create"}, append(createArgs(o), name)...)...)
	get := c.argv(c.paths().ZFS, "get", "-Hp", "-o", "name,property,value,source", strings.Join(props, ","), name)
	out, err := c.Exec.Run(ctx, Line(create...)+" && "+Line(get...), RunOptions{})
	if err != nil {
		return nil, fmt.Errorf("zfs create: %w", err)
	}
	if out.Code != 0 {
		return nil, &Error{Command: "zfs create", Stderr: firstNonEmpty(out.Stderr, out.Stdout), Code: out.Code}
	}
	return parseGet(out.Stdout)
}

func createArgs(o CreateOptions) []string {
	a := make([]string, 0, 2*len(o.Props)+4)
	if o.Parents {
		a = append(a, "-p")
	}
	if o.Sparse {
		a = append(a, "-s")
	}
	a = append(a, propArgs("-o", o.Props)...)
	if o.Volsize > 0 {
		a = append(a, "-V", fmt.Sprint(o.Volsize))
	}
	return a
}

// Create runs `zfs create`.
func (c *CLI) Create(ctx context.Context, name string, o CreateOptions) error {
	_, err := c.zfs(ctx, "create", append(createArgs(o), name)...)
	return err
}

// DestroyOptions tune Destroy.
type DestroyOptions struct {
	Recursive bool // -r: children and snapshots
	Force     bool // -f: unmount even if busy
	Defer     bool // -d: snapshots: destroy once the last clone is gone
}

// Destroy runs `zfs destroy`.
func (c *CLI) Destroy(ctx context.Context, name string, o DestroyOptions) error {
	var a []string
	if o.Recursive {
		a = append(a, "-r")
	}
	if o.Force {
		a = append(a, "-f")
	}
	if o.Defer {
		a = append(a, "-d")
	}
	_, err := c.zfs(ctx, "destroy", append(a, name)...)
	return err
}

// Set runs `zfs set p=v ... name`.
func (c *CLI) Set(ctx context.Context, name string, props ...Prop) error {
	if len(props) == 0 {
		return nil
	}
	var a []string
	for _, p := range props {
		a = append(a, p.Name+"="+p.Value)
	}
	_, err := c.zfs(ctx, "set", append(a, name)...)
	return err
}

// Inherit runs `zfs inherit prop name`.
func (c *CLI) Inherit(ctx context.Context, name, prop string) error {
	_, err := c.zfs(ctx, "inherit", prop, name)
	return err
}

// Snapshot runs `zfs snapshot [-o p=v]... ds@snap`.
func (c *CLI) Snapshot(ctx context.Context, snap string, props ...Prop) error {
	_, err := c.zfs(ctx, "snapshot", append(propArgs("-o", props), snap)...)
	return err
}

// Clone runs `zfs clone [-o p=v]... snap name`.
func (c *CLI) Clone(ctx context.Context, snap, name string, props ...Prop) error {
	_, err := c.zfs(ctx, "clone", append(propArgs("-o", props), snap, name)...)
	return err
}

// Promote runs `zfs promote name`.
func (c *CLI) Promote(ctx context.Context, name string) error {
	_, err := c.zfs(ctx, "promote", name)
	return err
}

// Rename runs `zfs rename from to`.
func (c *CLI) Rename(ctx context.Context, from, to string) error {
	_, err := c.zfs(ctx, "rename", from, to)
	return err
}

// SendReceive copies a snapshot into a new dataset: `zfs send snap | zfs
// receive target`, run by sh on the host so the stream never crosses the
// network. Only the receiving side's status counts, as in a plain pipeline.
func (c *CLI) SendReceive(ctx context.Context, snap, target string) error {
	p := c.paths()
	pipeline := Line(c.argv(p.ZFS, "send", snap)...) + " | " + Line(c.argv(p.ZFS, "receive", target)...)
	_, err := c.Do(ctx, "zfs send | zfs receive", []string{"sh", "-c", pipeline}, RunOptions{})
	return err
}
