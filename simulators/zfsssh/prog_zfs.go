package zfsssh

import (
	"io"
	"strings"
)

// zfs and zpool go to the Host. Reading works for everyone (as with
// /dev/zfs mode 0666 on Linux); changing anything needs root, so a non-root
// driver without sudo sees "permission denied" like on a real host.

var zfsReadOnly = map[string]bool{"list": true, "get": true, "version": true, "help": true, "holds": true,
	"userspace": true, "groupspace": true, "projectspace": true, "-?": true, "-V": true, "--version": true}

var zpoolReadOnly = map[string]bool{"list": true, "get": true, "status": true, "iostat": true, "version": true,
	"help": true, "-?": true, "-V": true, "--version": true}

// unprivilegedKeys is a Host that runs zfs load-key and unload-key for a
// user without root as OpenZFS does (*zfsmodel.Model): zfs checks the
// dataset and reads the key first, and only the kernel refuses, so the
// answer is libzfs's "Key load error: Permission denied." after those
// checks, not the generic refusal below.
type unprivilegedKeys interface {
	ZFSUnprivileged(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

func zfsCmd(p *proc, argv []string) int {
	if len(argv) > 1 && !p.root && (argv[1] == "load-key" || argv[1] == "unload-key") {
		if h, ok := p.env.srv.host.(unprivilegedKeys); ok {
			return h.ZFSUnprivileged(argv[1:], p.std.in, p.std.out, p.std.err)
		}
	}
	if len(argv) > 1 && !p.root && !zfsReadOnly[argv[1]] {
		p.printf("%s\n", zfsDenied(argv[1:]))
		return 1
	}
	return p.env.srv.host.ZFS(argv[1:], p.std.in, p.std.out, p.std.err)
}

func zpoolCmd(p *proc, argv []string) int {
	if len(argv) > 1 && !p.root && !zpoolReadOnly[argv[1]] {
		p.printf("cannot %s '%s': permission denied\n", argv[1], lastOperand(argv[2:]))
		return 1
	}
	return p.env.srv.host.Zpool(argv[1:], p.std.in, p.std.out, p.std.err)
}

// lastOperand is the last argument that is not an option.
func lastOperand(args []string) string {
	for i := len(args) - 1; i >= 0; i-- {
		if !strings.HasPrefix(args[i], "-") {
			return args[i]
		}
	}
	return ""
}

// zfsDenied words the refusal as zfs does for each subcommand.
func zfsDenied(args []string) string {
	sub, target := args[0], lastOperand(args[1:])
	switch sub {
	case "create", "clone":
		return "cannot create '" + target + "': permission denied"
	case "destroy":
		return "cannot destroy '" + target + "': permission denied"
	case "snapshot", "snap":
		return "cannot create snapshot '" + target + "': permission denied"
	case "set":
		return "cannot set property for '" + target + "': permission denied"
	case "inherit":
		prop := ""
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "-") {
				prop = a
				break
			}
		}
		return "cannot inherit " + prop + " for '" + target + "': permission denied"
	case "receive", "recv":
		return "cannot receive new filesystem stream: permission denied"
	}
	return "cannot " + sub + " '" + target + "': permission denied"
}
