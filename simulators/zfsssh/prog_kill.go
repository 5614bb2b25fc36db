package zfsssh

import (
	"strconv"
	"strings"
)

// killCmd: kill [-s SIG | -SIG | -N] [--] pid... A negative pid is a
// process group (procTable). Any signal but 0 ends the group's session as
// SIGKILL would: its command stops before its next simple command (a
// command in progress in the model finishes: a zfs ioctl is not undone),
// and the session ends with the signal. 0 only checks the group exists.
func killCmd(p *proc, argv []string) int {
	args := argv[1:]
	sig := "TERM"
	if len(args) > 1 && args[0] == "-s" {
		sig, args = args[1], args[2:]
	} else if len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "--" {
		if _, err := strconv.Atoi(args[0][1:]); err != nil || len(args) > 1 {
			sig, args = args[0][1:], args[1:]
		}
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	sig = strings.TrimPrefix(strings.ToUpper(sig), "SIG")
	switch sig {
	case "9":
		sig = "KILL"
	case "15":
		sig = "TERM"
	case "1":
		sig = "HUP"
	case "2":
		sig = "INT"
	case "0", "KILL", "TERM", "HUP", "INT":
	default:
		p.printf("kill: invalid signal number or name: %s\n", sig)
		return 1
	}
	if len(args) == 0 {
		p.printf("kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]\n")
		return 2
	}
	st := 0
	for _, a := range args {
		n, err := strconv.Atoi(a)
		if err != nil {
			p.printf("kill: illegal number: %s\n", a)
			st = 1
			continue
		}
		if n < 0 {
			n = -n
		}
		s := p.env.srv.procs.get(n)
		switch {
		case s == nil:
			p.printf("kill: (%s) - No such process\n", a)
			st = 1
		case !p.root && s.env.user != p.env.user:
			p.printf("kill: (%s) - Operation not permitted\n", a)
			st = 1
		case sig != "0":
			s.kill(sig)
		}
	}
	return st
}
