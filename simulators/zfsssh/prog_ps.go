package zfsssh

import (
	"fmt"
	"path"
	"strings"
)

// psCmd: ps [-A|-e] [-w...] [-o keyword[=header],...]. One line per process
// group (procTable): the group leader, which is what a session's command
// line shows as. Keywords: pid, pgid, sid (all the leader's pid), user,
// args, command, cmd, comm. Without -o: "PID TTY TIME CMD" as procps prints.
func psCmd(p *proc, argv []string) int {
	var keys, heads []string
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-A" || a == "-e" || a == "ax" || a == "-ax" || strings.HasPrefix(a, "-w") || a == "-ww":
		case a == "-o" && i+1 < len(argv):
			i++
			for _, f := range strings.Split(argv[i], ",") {
				k, h, hasHead := strings.Cut(f, "=")
				if !hasHead {
					h = strings.ToUpper(k)
					if k == "args" || k == "command" || k == "cmd" {
						h = "COMMAND"
					}
				}
				keys, heads = append(keys, k), append(heads, h)
			}
		default:
			p.printf("error: unsupported option (BSD syntax)\n\nUsage:\n ps [options]\n")
			return 1
		}
	}
	if keys == nil {
		keys, heads = []string{"pid", "tty", "time", "comm"}, []string{"PID", "TTY", "TIME", "CMD"}
	}
	for _, k := range keys {
		switch k {
		case "pid", "pgid", "sid", "user", "args", "command", "cmd", "comm", "tty", "time":
		default:
			p.printf("error: unknown user-defined format specifier \"%s\"\n", k)
			return 1
		}
	}
	if strings.Join(heads, "") != "" {
		fmt.Fprintln(p.std.out, strings.Join(heads, " "))
	}
	for _, e := range p.env.srv.procs.list() {
		f := make([]string, len(keys))
		for i, k := range keys {
			switch k {
			case "pid", "pgid", "sid":
				f[i] = fmt.Sprintf("%7d", e.pgid)
			case "user":
				f[i] = e.user
			case "args", "command", "cmd":
				f[i] = e.args
			case "comm":
				f[i] = path.Base(strings.Fields(e.args + " ?")[0])
			case "tty":
				f[i] = "?"
			case "time":
				f[i] = "00:00:00"
			}
		}
		fmt.Fprintln(p.std.out, strings.Join(f, " "))
	}
	return 0
}
