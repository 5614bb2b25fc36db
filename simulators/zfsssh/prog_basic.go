package zfsssh

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// echoCmd is dash's builtin echo (dash: only -n, escapes always
// interpreted) or the coreutils/bash echo (-n, -e, -E; escapes with -e).
func echoCmd(argv []string, out io.Writer, dash bool) int {
	args := argv[1:]
	newline, escapes := true, dash
	if dash {
		if len(args) > 0 && args[0] == "-n" {
			newline = false
			args = args[1:]
		}
	} else {
		for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
			for _, c := range args[0][1:] {
				switch c {
				case 'n':
					newline = false
				case 'e':
					escapes = true
				case 'E':
					escapes = false
				}
			}
			args = args[1:]
		}
	}
	s := strings.Join(args, " ")
	if escapes {
		var stop bool
		s, stop = unescape(s, !dash)
		if stop {
			newline = false
		}
	}
	if newline {
		s += "\n"
	}
	io.WriteString(out, s)
	return 0
}

// unescape interprets echo's backslash escapes; stop reports a \c.
func unescape(s string, bashStyle bool) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case '\\':
			b.WriteByte('\\')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'c':
			return b.String(), true
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'e', 'E':
			if !bashStyle {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			b.WriteByte(0x1b)
		case '0':
			n, j := 0, i+1
			for ; j < len(s) && j < i+4 && s[j] >= '0' && s[j] <= '7'; j++ {
				n = n*8 + int(s[j]-'0')
			}
			b.WriteByte(byte(n))
			i = j - 1
		case 'x':
			if !bashStyle {
				b.WriteString("\\x")
				continue
			}
			n, j := 0, i+1
			for ; j < len(s) && j < i+3 && isHex(s[j]); j++ {
				v, _ := strconv.ParseUint(s[j:j+1], 16, 8)
				n = n*16 + int(v)
			}
			if j == i+1 {
				b.WriteString("\\x")
				continue
			}
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String(), false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func catCmd(p *proc, argv []string) int {
	files := argv[1:]
	for _, f := range files {
		if len(f) > 1 && f[0] == '-' {
			if strings.IndexByte("AbeEnstTuv", f[1]) >= 0 {
				p.printf("cat: option -%c is not supported by the simulator\n", f[1])
			} else {
				p.printf("cat: invalid option -- '%c'\nTry 'cat --help' for more information.\n", f[1])
			}
			return 1
		}
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	st := 0
	for _, f := range files {
		if f == "-" {
			if _, err := io.Copy(p.std.out, p.std.in); err != nil {
				if p.ctx.Err() == nil {
					p.printf("cat: write error: %v\n", err)
				}
				return 1
			}
			continue
		}
		r, err := p.env.srv.fs.open(clean(p.env.cwd(), f))
		if err != nil {
			p.printf("cat: %s: %v\n", f, err)
			st = 1
			continue
		}
		io.Copy(p.std.out, r)
		r.Close()
	}
	return st
}

func unameCmd(p *proc, argv []string) int {
	s := p.env.srv
	fields := []struct {
		flag byte
		val  string
	}{
		{'s', s.uname.System}, {'n', s.hostname}, {'r', s.uname.Release},
		{'v', "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)"}, {'m', "x86_64"},
		{'p', "unknown"}, {'i', "unknown"}, {'o', "GNU/Linux"},
	}
	if s.uname.System != "Linux" {
		fields[3].val = "#1"
		fields[7].val = s.uname.System
	}
	long := map[string]string{"--all": "-a", "--kernel-name": "-s", "--nodename": "-n", "--kernel-release": "-r",
		"--kernel-version": "-v", "--machine": "-m", "--processor": "-p", "--hardware-platform": "-i", "--operating-system": "-o"}
	want := map[byte]bool{}
	for _, a := range argv[1:] {
		if short, ok := long[a]; ok {
			a = short
		}
		if len(a) < 2 || a[0] != '-' {
			p.printf("uname: extra operand '%s'\nTry 'uname --help' for more information.\n", a)
			return 1
		}
		for i := 1; i < len(a); i++ {
			c := a[i]
			switch {
			case c == 'a':
				for _, f := range fields {
					if f.val != "unknown" {
						want[f.flag] = true
					}
				}
			case strings.IndexByte("snrvmpio", c) >= 0:
				want[c] = true
			default:
				p.printf("uname: invalid option -- '%c'\nTry 'uname --help' for more information.\n", c)
				return 1
			}
		}
	}
	if len(want) == 0 {
		want['s'] = true
	}
	var out []string
	for _, f := range fields {
		if want[f.flag] {
			out = append(out, f.val)
		}
	}
	fmt.Fprintln(p.std.out, strings.Join(out, " "))
	return 0
}

func whoamiCmd(p *proc, argv []string) int {
	if len(argv) > 1 {
		p.printf("whoami: extra operand '%s'\nTry 'whoami --help' for more information.\n", argv[1])
		return 1
	}
	fmt.Fprintln(p.std.out, p.userName())
	return 0
}

// idCmd supports id [-u|-g|-G] [-n] [user].
func idCmd(p *proc, argv []string) int {
	var u, g, G, n bool
	var operands []string
	for _, a := range argv[1:] {
		if len(a) > 1 && a[0] == '-' {
			for _, c := range a[1:] {
				switch c {
				case 'u':
					u = true
				case 'g':
					g = true
				case 'G':
					G = true
				case 'n':
					n = true
				default:
					p.printf("id: invalid option -- '%c'\nTry 'id --help' for more information.\n", c)
					return 1
				}
			}
			continue
		}
		operands = append(operands, a)
	}
	name, uid := p.userName(), p.env.uid(p.root)
	if len(operands) > 0 {
		a := p.env.srv.users[operands[0]]
		if a == nil && operands[0] != "root" {
			p.printf("id: '%s': no such user\n", operands[0])
			return 1
		}
		name, uid = operands[0], 0
		if a != nil {
			uid = a.uid
		}
	}
	switch {
	case u || g || G:
		if n {
			fmt.Fprintln(p.std.out, name)
		} else {
			fmt.Fprintln(p.std.out, uid)
		}
	default:
		fmt.Fprintf(p.std.out, "uid=%d(%s) gid=%d(%s) groups=%d(%s)\n", uid, name, uid, name, uid, name)
	}
	return 0
}

func sleepCmd(p *proc, argv []string) int {
	if len(argv) < 2 {
		p.printf("sleep: missing operand\nTry 'sleep --help' for more information.\n")
		return 1
	}
	var total time.Duration
	for _, a := range argv[1:] {
		d, err := parseSleep(a)
		if err != nil {
			p.printf("sleep: invalid time interval '%s'\nTry 'sleep --help' for more information.\n", a)
			return 1
		}
		total += d
	}
	p.env.wait()
	t := time.NewTimer(total)
	defer t.Stop()
	select {
	case <-t.C:
		return 0
	case <-p.ctx.Done():
		return 130
	}
}

func parseSleep(a string) (time.Duration, error) {
	unit := time.Second
	switch {
	case strings.HasSuffix(a, "s"):
		a = strings.TrimSuffix(a, "s")
	case strings.HasSuffix(a, "m"):
		a, unit = strings.TrimSuffix(a, "m"), time.Minute
	case strings.HasSuffix(a, "h"):
		a, unit = strings.TrimSuffix(a, "h"), time.Hour
	case strings.HasSuffix(a, "d"):
		a, unit = strings.TrimSuffix(a, "d"), 24*time.Hour
	}
	f, err := strconv.ParseFloat(a, 64)
	if err != nil || f < 0 || f > 1e6 {
		return 0, errors.New("invalid")
	}
	return time.Duration(f * float64(unit)), nil
}
