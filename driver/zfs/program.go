package zfs

import (
	"context"
	"fmt"
	"strings"
)

// MaxProgram is the longest compound program RunProgram sends. The host's
// login shell receives the program as one argument of `sh -c`, so it must
// stay well below the smallest ARG_MAX of the hosts we drive (256 KiB on
// FreeBSD, 2 MiB on Linux); callers whose program would be longer fall back
// to one command per exec.
const MaxProgram = 64 << 10

// ErrProgramTooLong: the program exceeds MaxProgram; nothing was sent.
var ErrProgramTooLong = fmt.Errorf("compound program longer than %d bytes", MaxProgram)

// ZFSLine is one zfs command line (with sudo and the configured path),
// every word quoted, for a compound program.
func (c *CLI) ZFSLine(args ...string) string {
	return Line(c.argv(c.paths().ZFS, args...)...)
}

// RunProgram sends commands (each built with ZFSLine or Line) as one
// program, joined with "; " so each runs whatever the previous one's
// status: one exec, one round trip. Only sequential lists are used, no
// command substitution, conditionals or variables, so the program means
// the same to every POSIX shell (and to the simulator, which refuses the
// rest). Its outcome is the caller's to read from the output.
func (c *CLI) RunProgram(ctx context.Context, commands ...string) (Output, error) {
	prog := strings.Join(commands, "; ")
	if len(prog) > MaxProgram {
		return Output{}, ErrProgramTooLong
	}
	return c.Exec.Run(ctx, prog, RunOptions{})
}

// GetArgs are the arguments of the `zfs get` whose output ParseGet reads.
func GetArgs(name string, props ...string) []string {
	return []string{"get", "-Hp", "-o", "name,property,value,source", strings.Join(props, ","), name}
}

// ParseGet reads the output of `zfs get` run with GetArgs.
func ParseGet(stdout string) (Properties, error) { return parseGet(stdout) }

// CreateArgs are the arguments of `zfs create` with o.
func CreateArgs(name string, o CreateOptions) []string {
	return append([]string{"create"}, append(createArgs(o), name)...)
}

// StderrOf is the part of a program's stderr not written by commands on
// name that report "cannot open '<name>'" (the reads of a program, whose
// failure the caller learns from their missing output): what is left is
// the message of the command that changed something.
func StderrOf(stderr, name string) string {
	skip := "cannot open '" + name + "'"
	var keep []string
	for _, l := range strings.Split(stderr, "\n") {
		if l != "" && !strings.HasPrefix(l, skip) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
