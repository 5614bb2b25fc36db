package zfsssh

import (
	"io"
	"strings"
)

// xargsCmd: xargs [-r] [--] [command [initial-arguments]]. GNU's defaults:
// the words of standard input (split on blanks and newlines) are appended
// to the command, which runs once (also with no input unless -r), and a
// command that exits 1-125 makes xargs exit 123. The driver's compound
// programs use it to hand a value `zfs get` printed to `test` without
// command substitution or variables (driver/zfs/engine expand.go). Quotes
// and backslashes in the input, which GNU would interpret, are refused:
// nothing the driver sends produces them.
func xargsCmd(p *proc, argv []string) int {
	args := argv[1:]
	noEmpty := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		a := args[0]
		args = args[1:]
		if a == "--" {
			break
		}
		if a == "-r" || a == "--no-run-if-empty" {
			noEmpty = true
			continue
		}
		p.printf("xargs: option %s is not supported by the simulator\n", a)
		return 1
	}
	if len(args) == 0 {
		args = []string{"echo"}
	}
	var in []byte
	if p.std.in != nil {
		b, err := io.ReadAll(p.std.in)
		if err != nil {
			p.printf("xargs: read error: %v\n", err)
			return 1
		}
		in = b
	}
	if strings.ContainsAny(string(in), `'"\`) {
		p.printf("xargs: quotes and backslashes in the input are not supported by the simulator\n")
		return 1
	}
	words := strings.Fields(string(in))
	if len(words) == 0 && noEmpty {
		return 0
	}
	cmd := append(append([]string(nil), args...), words...)
	st, ok := p.runAs(cmd, p.root)
	switch {
	case !ok:
		p.printf("xargs: %s: No such file or directory\n", cmd[0])
		return 127
	case st == 255:
		return 124
	case st >= 1 && st <= 125:
		return 123
	}
	return st
}
