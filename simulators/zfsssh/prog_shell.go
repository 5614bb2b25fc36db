package zfsssh

import (
	"path"
	"strings"
)

// runAs runs argv as a program (not a builtin) found via Paths, like
// execvp. It reports false when the program does not exist.
func (p *proc) runAs(argv []string, root bool) (int, bool) {
	srv := p.env.srv
	prog, file, ok := srv.resolve(argv[0])
	if !ok {
		return 0, false
	}
	child := &proc{ctx: p.ctx, env: p.env, root: root, std: p.std, depth: p.depth, path: file}
	return srv.runProgram(child, prog, argv), true
}

// sudoCmd: sudo [-nSEHPk] [-u user] [--] command [args]. Root and users
// with User.Sudo run the command as root; others are asked for a password
// they cannot give, which is what a real sudo does without a terminal.
func sudoCmd(p *proc, argv []string) int {
	args := argv[1:]
	nonInteractive, stdinPassword := false, false
	target := "root"
loop:
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			args = args[1:]
			break loop
		case a == "-u" && len(args) > 1:
			target = args[1]
			args = args[2:]
		case strings.HasPrefix(a, "-u") && len(a) > 2:
			target = a[2:]
			args = args[1:]
		case len(a) > 1 && a[0] == '-' && !strings.HasPrefix(a, "--"):
			for _, c := range a[1:] {
				switch c {
				case 'n':
					nonInteractive = true
				case 'S':
					stdinPassword = true
				case 'E', 'H', 'P', 'k', 'b':
				default:
					p.printf("sudo: invalid option -- '%c'\n", c)
					p.printf("usage: sudo -h | -K | -k | -V\n")
					return 1
				}
			}
			args = args[1:]
		default:
			break loop
		}
	}
	if len(args) == 0 {
		p.printf("usage: sudo -h | -K | -k | -V\nusage: sudo -v [-ABkNnS] [-g group] [-h host] [-p prompt] [-u user]\n")
		return 1
	}
	u := p.env.user
	if !p.root && !u.sudo {
		if !nonInteractive && !stdinPassword && !p.env.pty {
			p.printf("sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper\n")
		}
		p.printf("sudo: a password is required\n")
		return 1
	}
	asRoot := target == "root" || target == "0"
	if !asRoot {
		if _, ok := p.env.srv.users[target]; !ok {
			p.printf("sudo: unknown user %s\n", target)
			p.printf("sudo: error initializing audit plugin sudoers_audit\n")
			return 1
		}
	}
	st, ok := p.runAs(args, asRoot)
	if !ok {
		p.printf("sudo: %s: command not found\n", args[0])
		return 1
	}
	return st
}

// chrootCmd: chroot NEWROOT [command [args]]. Only "/" (or a directory that
// exists) is meaningful here; the command runs on the same filesystem.
func chrootCmd(p *proc, argv []string) int {
	args := argv[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "--") {
		args = args[1:]
	}
	if len(args) == 0 {
		p.printf("chroot: missing operand\nTry 'chroot --help' for more information.\n")
		return 125
	}
	dir := args[0]
	fi, err := p.env.srv.fs.stat(clean(p.env.cwd(), dir))
	if err != nil || fi.kind != kindDir {
		if err == nil {
			err = errNotDir
		}
		p.printf("chroot: cannot change root directory to '%s': %v\n", dir, err)
		return 125
	}
	if !p.root {
		p.printf("chroot: cannot change root directory to '%s': %v\n", dir, errNotPerm)
		return 125
	}
	cmd := args[1:]
	if len(cmd) == 0 {
		cmd = []string{"/bin/sh", "-i"}
	}
	st, ok := p.runAs(cmd, p.root)
	if !ok {
		p.printf("chroot: failed to run command '%s': No such file or directory\n", cmd[0])
		return 127
	}
	return st
}

// shCmd: sh [-c script [name [args...]]] | sh [-s] (script on stdin) | sh file.
func shCmd(p *proc, argv []string) int {
	name := path.Base(argv[0])
	if name == "dash" {
		name = "sh"
	}
	args := argv[1:]
	var command string
	hasC, hasS := false, false
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		a := args[0]
		if a == "--" {
			args = args[1:]
			break
		}
		if a == "--login" || a == "--noprofile" || a == "--norc" {
			args = args[1:]
			continue
		}
		for _, c := range a[1:] {
			switch c {
			case 'c':
				hasC = true
			case 's':
				hasS = true
			case 'i', 'l':
			default:
				if name == "bash" {
					p.printf("bash: -%c: invalid option\n", c)
				} else {
					p.printf("%s: 0: Illegal option -%c\n", name, c)
				}
				return 2
			}
		}
		args = args[1:]
	}
	depth := p.depth + 1
	if p.framing {
		// The program a shell session runs: its commands read as an
		// exec's would (depth 0 under the session's framing shell).
		depth = p.depth
	}
	sh := newShell(p.env, p.root, name, depth)
	switch {
	case hasC:
		if len(args) == 0 {
			if name == "bash" {
				p.printf("bash: -c: option requires an argument\n")
			} else {
				p.printf("%s: 0: -c requires an argument\n", name)
			}
			return 2
		}
		command = args[0]
		if len(args) > 1 {
			sh.name = args[1]
			sh.args = args[2:]
		}
		return sh.run(p.ctx, command, p.std)
	case hasS:
		// sh -s args: the script is stdin, args are $1...
		sh.args = args
	case len(args) > 0:
		data, err := p.env.srv.fs.readFile(clean(p.env.cwd(), args[0]))
		if err != nil {
			p.printf("%s: 0: cannot open %s: No such file\n", name, args[0])
			return 2
		}
		sh.name, sh.args = args[0], args[1:]
		return sh.run(p.ctx, string(data), p.std)
	}
	// The script comes from stdin; on the session's channel, this is a
	// driver's shell session (shellsession.go).
	return readScript(p, sh, p.env.channel != nil && p.std.in == p.env.channel)
}
