package zfsmodel

import "io"

// The key commands of a user without root. zfs(8) reads what it may (the
// dataset, its encryption root and key status, the key from its location)
// and checks it as for root; only the kernel's ioctl then refuses with
// EPERM, which libzfs words "Key load error: Permission denied." (and
// "Key unload error: ..."). So a mistake root would be told about (not
// encrypted, not the encryption root, the key already loaded, a malformed
// key) is told the same way to the unprivileged user first.

// UnprivilegedKeyCommands are the zfs subcommands ZFSUnprivileged runs.
var UnprivilegedKeyCommands = map[string]bool{"load-key": true, "unload-key": true}

// ZFSUnprivileged runs `zfs load-key` or `zfs unload-key` (args exclude
// the program name) as a user without root, and returns its exit status.
// Other subcommands are refused here: the SSH server words those itself.
func (m *Model) ZFSUnprivileged(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := newCLI(m, "zfs", stdin, stdout, stderr)
	defer c.done()
	if len(args) == 0 || !UnprivilegedKeyCommands[args[0]] {
		c.errorf("zfsmodel: ZFSUnprivileged runs only load-key and unload-key\n")
		return 2
	}
	c.unprivileged = true
	c.cmd = args[0]
	if args[0] == "load-key" {
		return c.zfsLoadKey(args[1:])
	}
	return c.zfsUnloadKey(args[1:])
}
