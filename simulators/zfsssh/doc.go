// Package zfsssh is the ZFS-over-SSH simulator: a real SSH server
// (golang.org/x/crypto/ssh) standing in for "any ZFS host" that CSI drivers
// such as democratic-csi's zfs-generic-* reach with password or key.
//
// Every exec request, and every line of an interactive shell, is parsed like
// a POSIX sh (dash) would parse it: quotes, escapes, ";", "&&", "||", "|",
// redirections, $0, $?, positional parameters. Nothing is ever evaluated:
// command substitution ($(...), `...`) is refused with a syntax error, so a
// name such as '$(touch x)' can only ever arrive as a literal argument.
// Each simple command is resolved against a table of program paths and run
// by a small Go implementation: zfs and zpool go to a Host (the ZFS model),
// targetcli and nvmetcli drive in-memory models of LIO and nvmet that behave
// like the kernel targets and print targetcli-fb's and nvmetcli's messages,
// and a handful of coreutils (echo, cat, test, chmod, chown, setfacl, ...)
// act on a tiny virtual filesystem joined to the datasets' real directories.
// A session's output reaches the channel as sshd sends a program's: what
// the command writes without waiting in between leaves in one packet per
// stream (outbox.go), not one per write.
//
// The server records every executed command (Commands), counts overlapping
// targetcli/nvmetcli runs (Stats), and injects faults on request (Faults):
// latency per command (SetLatency: each command a line runs, the host's
// work) and per exec (SetRoundTripLatency: once per SSH exec, the network's
// round trip, so benchmarks credit drivers that batch commands into one
// exec), error rates, dropped connections after a command took effect
// (DropAfter) or in the middle of a command's output (DropStreamAfter, a
// zfs send cut off), and targetcli's "Ran out of input".
package zfsssh
