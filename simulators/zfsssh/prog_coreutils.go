package zfsssh

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The ordinary coreutils (and grep) an admin or a driver's diagnostics run
// on a storage host: ls, head, tail, wc, basename, dirname, readlink,
// realpath, date, sort, uniq, grep, pwd. They read the same virtual
// filesystem as cat; options beyond the common ones are refused with the
// tool's own "invalid option" wording, never ignored silently.

// coreutils maps the names to their implementations.
var coreutils = map[string]program{
	"ls": lsCmd, "head": func(p *proc, a []string) int { return headTail(p, a, true) },
	"tail": func(p *proc, a []string) int { return headTail(p, a, false) },
	"wc":   wcCmd, "basename": basenameCmd, "dirname": dirnameCmd, "readlink": readlinkCmd,
	"realpath": readlinkCmd, "date": dateCmd, "sort": sortCmd, "uniq": uniqCmd, "grep": grepCmd, "pwd": pwdCmd,
	"printf": printfCmd,
}

func coreutilNames() []string {
	out := make([]string, 0, len(coreutils))
	for n := range coreutils {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// splitFlags separates single-letter flags (bundled, "-la") from operands;
// "--" ends the flags. valued lists the flags that take a value.
func splitFlags(tool string, p *proc, args []string, allowed, valued string) (map[byte]string, []string, bool) {
	flags := map[byte]string{}
	var ops []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			ops = append(ops, a)
			continue
		}
		if n, err := strconv.Atoi(a[1:]); err == nil && strings.ContainsRune(valued, 'n') { // head -5
			flags['n'] = strconv.Itoa(n)
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			if !strings.ContainsRune(allowed+valued, rune(c)) {
				p.printf("%s: invalid option -- '%c'\nTry '%s --help' for more information.\n", tool, c, tool)
				return nil, nil, false
			}
			if strings.ContainsRune(valued, rune(c)) {
				v := a[j+1:]
				if v == "" {
					if i+1 >= len(args) {
						p.printf("%s: option requires an argument -- '%c'\nTry '%s --help' for more information.\n", tool, c, tool)
						return nil, nil, false
					}
					i++
					v = args[i]
				}
				flags[c] = v
				break
			}
			flags[c] = ""
		}
	}
	return flags, ops, true
}

// readInputs returns the contents of the operands ("-" or none: stdin).
func readInputs(tool string, p *proc, ops []string, each func(name string, data []byte)) int {
	if len(ops) == 0 {
		ops = []string{"-"}
	}
	st := 0
	for _, f := range ops {
		if f == "-" {
			data, _ := io.ReadAll(p.std.in)
			each(f, data)
			continue
		}
		data, err := p.env.srv.fs.readFile(clean(p.env.cwd(), f))
		if err != nil {
			p.printf("%s: %s: %v\n", tool, f, err)
			st = 1
			continue
		}
		each(f, data)
	}
	return st
}

// lines splits data after each newline; a last line without one stays
// as it is.
func lines(data []byte) []string {
	var out []string
	rest := string(data)
	for rest != "" {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			out = append(out, rest)
			break
		}
		out = append(out, rest[:i+1])
		rest = rest[i+1:]
	}
	return out
}

func lsCmd(p *proc, argv []string) int {
	flags, ops, ok := splitFlags("ls", p, argv[1:], "1aAldhFtrS", "")
	if !ok {
		return 2
	}
	if len(ops) == 0 {
		ops = []string{"."}
	}
	_, long := flags['l']
	_, all := flags['a']
	_, dirOnly := flags['d']
	fsys := p.env.srv.fs
	st := 0
	line := func(name string, fi fileInfo) {
		if !long {
			fmt.Fprintln(p.std.out, name)
			return
		}
		kind := map[fileKind]byte{kindFile: '-', kindDir: 'd', kindBlock: 'b', kindChar: 'c'}[fi.kind]
		fmt.Fprintf(p.std.out, "%c%s 1 %s %s %d %s %s\n", kind, permString(fi.mode), userName(fi.uid), userName(fi.gid),
			fi.size, time.Now().UTC().Format("Jan _2 15:04"), name)
	}
	for i, op := range ops {
		full := clean(p.env.cwd(), op)
		fi, err := fsys.stat(full)
		if err != nil {
			p.printf("ls: cannot access '%s': %v\n", op, err)
			st = 2
			continue
		}
		if fi.kind != kindDir || dirOnly {
			line(op, fi)
			continue
		}
		if len(ops) > 1 {
			if i > 0 {
				fmt.Fprintln(p.std.out)
			}
			fmt.Fprintf(p.std.out, "%s:\n", op)
		}
		names := fsys.readDir(full)
		if all {
			names = append([]string{".", ".."}, names...)
		}
		if long {
			fmt.Fprintf(p.std.out, "total %d\n", len(names))
		}
		for _, n := range names {
			if !all && strings.HasPrefix(n, ".") {
				continue
			}
			cfi, _ := fsys.stat(path.Join(full, n))
			line(n, cfi)
		}
	}
	return st
}

func permString(mode uint32) string {
	const rwx = "rwxrwxrwx"
	b := []byte("---------")
	for i := 0; i < 9; i++ {
		if mode&(1<<(8-i)) != 0 {
			b[i] = rwx[i]
		}
	}
	return string(b)
}

func userName(id int) string {
	if id == 0 {
		return "root"
	}
	return strconv.Itoa(id)
}

func headTail(p *proc, argv []string, head bool) int {
	tool := "tail"
	if head {
		tool = "head"
	}
	flags, ops, ok := splitFlags(tool, p, argv[1:], "qv", "nc")
	if !ok {
		return 1
	}
	n := 10
	if v, set := flags['n']; set {
		k, err := strconv.Atoi(strings.TrimPrefix(v, "+"))
		if err != nil {
			p.printf("%s: invalid number of lines: '%s'\n", tool, v)
			return 1
		}
		n = k
	}
	bytesN := -1
	if v, set := flags['c']; set {
		k, err := strconv.Atoi(v)
		if err != nil {
			p.printf("%s: invalid number of bytes: '%s'\n", tool, v)
			return 1
		}
		bytesN = k
	}
	many := len(ops) > 1
	first := true
	return readInputs(tool, p, ops, func(name string, data []byte) {
		if many {
			if !first {
				fmt.Fprintln(p.std.out)
			}
			fmt.Fprintf(p.std.out, "==> %s <==\n", name)
		}
		first = false
		if bytesN >= 0 {
			if bytesN > len(data) {
				bytesN = len(data)
			}
			if head {
				_, _ = p.std.out.Write(data[:bytesN])
			} else {
				_, _ = p.std.out.Write(data[len(data)-bytesN:])
			}
			return
		}
		ls := lines(data)
		if n > len(ls) {
			n = len(ls)
		}
		if head {
			ls = ls[:n]
		} else {
			ls = ls[len(ls)-n:]
		}
		io.WriteString(p.std.out, strings.Join(ls, ""))
	})
}

func wcCmd(p *proc, argv []string) int {
	flags, ops, ok := splitFlags("wc", p, argv[1:], "lwcm", "")
	if !ok {
		return 1
	}
	if len(flags) == 0 {
		flags = map[byte]string{'l': "", 'w': "", 'c': ""}
	}
	var tl, tw, tc int
	emit := func(l, w, c int, name string) {
		var cols []string
		for _, f := range []struct {
			flag byte
			v    int
		}{{'l', l}, {'w', w}, {'c', c}, {'m', c}} {
			if _, on := flags[f.flag]; on {
				cols = append(cols, strconv.Itoa(f.v))
			}
		}
		if name != "" && name != "-" {
			cols = append(cols, name)
		}
		fmt.Fprintln(p.std.out, strings.Join(cols, " "))
	}
	st := readInputs("wc", p, ops, func(name string, data []byte) {
		l, w, c := bytes.Count(data, []byte("\n")), len(strings.Fields(string(data))), len(data)
		tl, tw, tc = tl+l, tw+w, tc+c
		emit(l, w, c, name)
	})
	if len(ops) > 1 {
		emit(tl, tw, tc, "total")
	}
	return st
}

func basenameCmd(p *proc, argv []string) int {
	if len(argv) < 2 {
		p.printf("basename: missing operand\nTry 'basename --help' for more information.\n")
		return 1
	}
	b := path.Base(argv[1])
	if len(argv) > 2 {
		b = strings.TrimSuffix(b, argv[2])
	}
	fmt.Fprintln(p.std.out, b)
	return 0
}

func dirnameCmd(p *proc, argv []string) int {
	if len(argv) < 2 {
		p.printf("dirname: missing operand\nTry 'dirname --help' for more information.\n")
		return 1
	}
	for _, a := range argv[1:] {
		fmt.Fprintln(p.std.out, path.Dir(a))
	}
	return 0
}

// readlinkCmd is readlink and realpath. The virtual filesystem has no
// symbolic links: readlink without -f/-e/-m prints nothing and fails (its
// operand is no link); the canonical forms print the absolute, cleaned
// path, realpath and -e only of paths that exist.
func readlinkCmd(p *proc, argv []string) int {
	tool := path.Base(argv[0])
	flags, ops, ok := splitFlags(tool, p, argv[1:], "femnqsz", "")
	if !ok {
		return 1
	}
	if tool == "readlink" && !hasFlag(flags, 'f') && !hasFlag(flags, 'e') && !hasFlag(flags, 'm') {
		return 1
	}
	mustExist := tool == "realpath" && !hasFlag(flags, 'm') || hasFlag(flags, 'e')
	st := 0
	for _, op := range ops {
		full := clean(p.env.cwd(), op)
		if _, err := p.env.srv.fs.stat(full); err != nil && mustExist {
			if tool == "realpath" {
				p.printf("realpath: %s: %v\n", op, err)
			}
			st = 1
			continue
		}
		fmt.Fprintln(p.std.out, full)
	}
	return st
}

func hasFlag(f map[byte]string, c byte) bool { _, ok := f[c]; return ok }

func dateCmd(p *proc, argv []string) int {
	now := time.Now().UTC()
	for _, a := range argv[1:] {
		switch {
		case a == "-u" || a == "--utc":
		case a == "+%s":
			fmt.Fprintln(p.std.out, now.Unix())
			return 0
		case strings.HasPrefix(a, "+"):
			r := strings.NewReplacer("%Y", now.Format("2006"), "%m", now.Format("01"), "%d", now.Format("02"),
				"%H", now.Format("15"), "%M", now.Format("04"), "%S", now.Format("05"), "%s", strconv.FormatInt(now.Unix(), 10),
				"%F", now.Format("2006-01-02"), "%T", now.Format("15:04:05"), "%Z", "UTC", "%%", "%")
			fmt.Fprintln(p.std.out, r.Replace(a[1:]))
			return 0
		default:
			p.printf("date: invalid date '%s'\n", a)
			return 1
		}
	}
	fmt.Fprintln(p.std.out, now.Format("Mon Jan _2 15:04:05 MST 2006"))
	return 0
}

func sortCmd(p *proc, argv []string) int {
	flags, ops, ok := splitFlags("sort", p, argv[1:], "rnu", "")
	if !ok {
		return 2
	}
	var all []string
	st := readInputs("sort", p, ops, func(_ string, data []byte) {
		for _, l := range lines(data) {
			all = append(all, strings.TrimSuffix(l, "\n"))
		}
	})
	less := func(a, b string) bool { return a < b }
	if hasFlag(flags, 'n') {
		less = func(a, b string) bool {
			x, _ := strconv.ParseFloat(strings.TrimSpace(a), 64)
			y, _ := strconv.ParseFloat(strings.TrimSpace(b), 64)
			return x < y
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if hasFlag(flags, 'r') {
			return less(all[j], all[i])
		}
		return less(all[i], all[j])
	})
	prev := "\x00"
	for _, l := range all {
		if hasFlag(flags, 'u') && l == prev {
			continue
		}
		prev = l
		fmt.Fprintln(p.std.out, l)
	}
	return st
}

func uniqCmd(p *proc, argv []string) int {
	flags, ops, ok := splitFlags("uniq", p, argv[1:], "cdu", "")
	if !ok {
		return 1
	}
	return readInputs("uniq", p, ops, func(_ string, data []byte) {
		ls := lines(data)
		for i := 0; i < len(ls); {
			j := i
			for j < len(ls) && ls[j] == ls[i] {
				j++
			}
			n := j - i
			switch {
			case hasFlag(flags, 'd') && n < 2, hasFlag(flags, 'u') && n > 1:
			case hasFlag(flags, 'c'):
				fmt.Fprintf(p.std.out, "%7d %s", n, ls[i])
			default:
				io.WriteString(p.std.out, ls[i])
			}
			i = j
		}
	})
}

// grepCmd: fixed strings or regular expressions (Go's RE2, which covers
// the ERE drivers use), -q -v -c -i -E -F -e -n -h.
func grepCmd(p *proc, argv []string) int {
	flags, ops, ok := splitFlags("grep", p, argv[1:], "qvciEFnhsx", "e")
	if !ok {
		return 2
	}
	pat, given := flags['e']
	if !given {
		if len(ops) == 0 {
			p.printf("Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n")
			return 2
		}
		pat, ops = ops[0], ops[1:]
	}
	expr := pat
	if hasFlag(flags, 'F') {
		expr = regexp.QuoteMeta(pat)
	} else if !hasFlag(flags, 'E') {
		// basic regular expressions: \( \) \| \+ are the operators
		expr = strings.NewReplacer(`\(`, `(`, `\)`, `)`, `\|`, `|`, `\+`, `+`, `(`, `\(`, `)`, `\)`, `|`, `\|`, `+`, `\+`).Replace(pat)
	}
	if hasFlag(flags, 'x') {
		expr = "^(?:" + expr + ")$"
	}
	if hasFlag(flags, 'i') {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		p.printf("grep: %v\n", err)
		return 2
	}
	matched := false
	many := len(ops) > 1 && !hasFlag(flags, 'h')
	st := readInputs("grep", p, ops, func(name string, data []byte) {
		count := 0
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for n := 1; sc.Scan(); n++ {
			l := sc.Text()
			if re.MatchString(l) == hasFlag(flags, 'v') {
				continue
			}
			matched = true
			count++
			if hasFlag(flags, 'q') || hasFlag(flags, 'c') {
				continue
			}
			prefix := ""
			if many {
				prefix = name + ":"
			}
			if hasFlag(flags, 'n') {
				prefix += strconv.Itoa(n) + ":"
			}
			fmt.Fprintln(p.std.out, prefix+l)
		}
		if hasFlag(flags, 'c') {
			if many {
				fmt.Fprintf(p.std.out, "%s:%d\n", name, count)
			} else {
				fmt.Fprintln(p.std.out, count)
			}
		}
	})
	switch {
	case st != 0 && !(hasFlag(flags, 'q') && matched):
		return 2
	case matched:
		return 0
	}
	return 1
}

func pwdCmd(p *proc, _ []string) int {
	fmt.Fprintln(p.std.out, p.env.cwd())
	return 0
}

// readDir lists a directory's entries, sorted: a dataset's real directory,
// or the in-memory tree's children.
func (v *vfs) readDir(dir string) []string {
	if hostDir, ok := v.host.HostPath(dir); ok {
		ents, _ := os.ReadDir(hostDir)
		out := make([]string, 0, len(ents))
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}
	seen := map[string]bool{}
	v.mu.Lock()
	for p := range v.mem {
		if p != "/" && path.Dir(p) == dir {
			seen[path.Base(p)] = true
		}
	}
	v.mu.Unlock()
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// printfEscapes are the backslash escapes printfCmd knows. One replacer for
// every call: building it was a twentieth of the simulator's CPU, as a
// shell session's framing runs three printfs per program (issue 16). A
// Replacer is safe for concurrent use.
var printfEscapes = strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`)

// printfCmd is printf(1) for %s, %d, %% and the backslash escapes \n, \t,
// \\; the format is reused while arguments remain, as printf does.
func printfCmd(p *proc, argv []string) int {
	if len(argv) < 2 {
		p.printf("printf: usage: printf format [arguments]\n")
		return 2
	}
	format := printfEscapes.Replace(argv[1])
	args := argv[2:]
	for {
		var b strings.Builder
		used := 0
		for i := 0; i < len(format); i++ {
			if format[i] != '%' || i+1 >= len(format) {
				b.WriteByte(format[i])
				continue
			}
			i++
			switch format[i] {
			case '%':
				b.WriteByte('%')
			case 's', 'd':
				arg := ""
				if used < len(args) {
					arg = args[used]
				}
				used++
				if format[i] == 'd' && arg == "" {
					arg = "0"
				}
				b.WriteString(arg)
			default:
				b.WriteByte('%')
				b.WriteByte(format[i])
			}
		}
		io.WriteString(p.std.out, b.String())
		if used == 0 || used >= len(args) {
			return 0
		}
		args = args[used:]
	}
}
