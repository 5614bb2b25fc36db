package zfsssh

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The file tools act on the virtual filesystem with coreutils' wording
// (C locale). Only the owner or root may change a file's mode or ACL, and
// only root its owner, so "sudo" matters as on a real host.

// splitOpts separates leading short options (until "--" or the first
// operand) from operands.
func splitOpts(args []string, withValue string) (opts []string, values map[string]string, operands []string) {
	values = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return opts, values, append(operands, args[i+1:]...)
		}
		if len(a) > 1 && a[0] == '-' && !strings.HasPrefix(a, "--") {
			for j := 1; j < len(a); j++ {
				c := a[j : j+1]
				if strings.Contains(withValue, c) {
					v := a[j+1:]
					if v == "" && i+1 < len(args) {
						i++
						v = args[i]
					}
					values[c] = v
					break
				}
				opts = append(opts, c)
			}
			continue
		}
		if strings.HasPrefix(a, "--") {
			opts = append(opts, a)
			continue
		}
		operands = append(operands, a)
	}
	return opts, values, operands
}

func hasOpt(opts []string, names ...string) bool {
	for _, o := range opts {
		for _, n := range names {
			if o == n {
				return true
			}
		}
	}
	return false
}

func missingOperand(p *proc, tool string, operands []string) int {
	if len(operands) == 0 {
		p.printf("%s: missing operand\nTry '%s --help' for more information.\n", tool, tool)
	} else {
		p.printf("%s: missing operand after '%s'\nTry '%s --help' for more information.\n", tool, operands[len(operands)-1], tool)
	}
	return 1
}

// walk calls fn for p and, when recursive, everything below it.
func (p *proc) walk(target string, fi fileInfo, recursive bool, fn func(string, fileInfo) error) error {
	if err := fn(target, fi); err != nil {
		return err
	}
	if !recursive || fi.kind != kindDir {
		return nil
	}
	v := p.env.srv.fs
	if fi.real != "" {
		return filepath.WalkDir(fi.real, func(real string, d fs.DirEntry, err error) error {
			if err != nil || real == fi.real {
				return err
			}
			rel, _ := filepath.Rel(fi.real, real)
			sub := path.Join(target, filepath.ToSlash(rel))
			sfi, err := v.stat(sub)
			if err != nil {
				return err
			}
			return fn(sub, sfi)
		})
	}
	for _, sub := range v.list() {
		if strings.HasPrefix(sub, target+"/") || (target == "/" && sub != "/") {
			if sfi, err := v.stat(sub); err == nil {
				if err := fn(sub, sfi); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func chmodCmd(p *proc, argv []string) int {
	opts, _, operands := splitOpts(argv[1:], "")
	// "chmod -w file": a mode, not an option.
	for _, o := range opts {
		if strings.Contains("rwxXst", o) {
			operands = append([]string{"-" + o}, operands...)
		}
	}
	if len(operands) < 2 {
		return missingOperand(p, "chmod", operands)
	}
	apply, err := parseMode(operands[0])
	if err != nil {
		p.printf("chmod: invalid mode: '%s'\nTry 'chmod --help' for more information.\n", operands[0])
		return 1
	}
	recursive := hasOpt(opts, "R", "--recursive")
	v := p.env.srv.fs
	st := 0
	for _, f := range operands[1:] {
		target := clean(p.env.cwd(), f)
		fi, err := v.stat(target)
		if err != nil {
			p.printf("chmod: cannot access '%s': %v\n", f, err)
			st = 1
			continue
		}
		err = p.walk(target, fi, recursive, func(sub string, sfi fileInfo) error {
			if !p.root && sfi.uid != p.env.uid(false) {
				return fmt.Errorf("changing permissions of '%s': %w", displayPath(f, target, sub), errNotPerm)
			}
			return v.chmod(sub, sfi, apply(sfi.mode, sfi.kind == kindDir))
		})
		if err != nil {
			p.printf("chmod: %v\n", err)
			st = 1
		}
	}
	return st
}

func displayPath(arg, target, sub string) string {
	if sub == target {
		return arg
	}
	return path.Join(arg, strings.TrimPrefix(sub, target+"/"))
}

// parseMode parses an octal or symbolic (u+rwx,g-w,o=) mode.
func parseMode(spec string) (func(old uint32, dir bool) uint32, error) {
	if spec == "" {
		return nil, errors.New("empty mode")
	}
	if n, err := strconv.ParseUint(spec, 8, 32); err == nil && len(spec) <= 5 && spec[0] != '+' {
		return func(uint32, bool) uint32 { return uint32(n) & 0o7777 }, nil
	}
	type action struct {
		who  uint32 // mask of affected bits; 0 = "a" filtered by the umask
		op   byte
		perm string
	}
	var acts []action
	for _, clause := range strings.Split(spec, ",") {
		i := 0
		var who uint32
		for ; i < len(clause) && strings.IndexByte("ugoa", clause[i]) >= 0; i++ {
			switch clause[i] {
			case 'u':
				who |= 0o4700
			case 'g':
				who |= 0o2070
			case 'o':
				who |= 0o1007
			case 'a':
				who |= 0o7777
			}
		}
		if i == len(clause) {
			return nil, errors.New("no operator")
		}
		for i < len(clause) {
			op := clause[i]
			if op != '+' && op != '-' && op != '=' {
				return nil, errors.New("bad operator")
			}
			i++
			j := i
			for ; j < len(clause) && strings.IndexByte("rwxXstugo", clause[j]) >= 0; j++ {
			}
			acts = append(acts, action{who: who, op: op, perm: clause[i:j]})
			i = j
		}
	}
	return func(old uint32, dir bool) uint32 {
		m := old
		for _, a := range acts {
			who := a.who
			if who == 0 {
				who = 0o7777 &^ 0o022 // the umask filters an omitted "who"
			}
			var bits uint32
			for _, c := range a.perm {
				switch c {
				case 'r':
					bits |= 0o444
				case 'w':
					bits |= 0o222
				case 'x':
					bits |= 0o111
				case 'X':
					if dir || old&0o111 != 0 {
						bits |= 0o111
					}
				case 's':
					bits |= 0o6000
				case 't':
					bits |= 0o1000
				case 'u':
					v := (old >> 6) & 7
					bits |= v<<6 | v<<3 | v
				case 'g':
					v := (old >> 3) & 7
					bits |= v<<6 | v<<3 | v
				case 'o':
					v := old & 7
					bits |= v<<6 | v<<3 | v
				}
			}
			bits &= who
			switch a.op {
			case '+':
				m |= bits
			case '-':
				m &^= bits
			case '=':
				clear := who & 0o0777
				if a.who == 0 {
					clear = 0o0777
				}
				m = (m &^ clear) | bits
			}
		}
		return m
	}, nil
}

// Well-known accounts of a Debian host, besides the configured users.
var systemUsers = map[string]int{"root": 0, "daemon": 1, "bin": 2, "sys": 3, "www-data": 33, "nobody": 65534}
var systemGroups = map[string]int{"root": 0, "daemon": 1, "bin": 2, "sys": 3, "adm": 4, "disk": 6, "www-data": 33,
	"staff": 50, "users": 100, "nogroup": 65534}

func (s *Server) lookupUser(name string) (int, bool) {
	if n, err := strconv.Atoi(name); err == nil && n >= 0 {
		return n, true
	}
	if a := s.users[name]; a != nil {
		return a.uid, true
	}
	id, ok := systemUsers[name]
	return id, ok
}

func (s *Server) lookupGroup(name string) (int, bool) {
	if n, err := strconv.Atoi(name); err == nil && n >= 0 {
		return n, true
	}
	if a := s.users[name]; a != nil {
		return a.uid, true
	}
	id, ok := systemGroups[name]
	return id, ok
}

func chownCmd(p *proc, argv []string) int {
	opts, _, operands := splitOpts(argv[1:], "")
	if len(operands) < 2 {
		return missingOperand(p, "chown", operands)
	}
	spec := operands[0]
	uid, gid := -1, -1
	userPart, groupPart, hasColon := strings.Cut(spec, ":")
	srv := p.env.srv
	if userPart != "" {
		id, ok := srv.lookupUser(userPart)
		if !ok {
			p.printf("chown: invalid user: '%s'\n", spec)
			return 1
		}
		uid = id
		if hasColon && groupPart == "" {
			// "user:" means the user's login group.
			gid = id
			if userPart == "nobody" {
				gid = 65534
			}
		}
	}
	if groupPart != "" {
		id, ok := srv.lookupGroup(groupPart)
		if !ok {
			p.printf("chown: invalid group: '%s'\n", spec)
			return 1
		}
		gid = id
	}
	recursive := hasOpt(opts, "R", "--recursive")
	st := 0
	for _, f := range operands[1:] {
		target := clean(p.env.cwd(), f)
		fi, err := srv.fs.stat(target)
		if err != nil {
			p.printf("chown: cannot access '%s': %v\n", f, err)
			st = 1
			continue
		}
		err = p.walk(target, fi, recursive, func(sub string, sfi fileInfo) error {
			if uid < 0 && gid < 0 {
				return nil
			}
			if !p.root && (uid >= 0 && uid != sfi.uid || gid >= 0 && gid != sfi.gid) {
				return fmt.Errorf("changing ownership of '%s': %w", displayPath(f, target, sub), errNotPerm)
			}
			return srv.fs.chown(sub, sfi, uid, gid)
		})
		if err != nil {
			p.printf("chown: %v\n", err)
			st = 1
		}
	}
	return st
}

// aclTarget checks that the caller may change path's ACL.
func (p *proc) aclTarget(f string) (string, fileInfo, error) {
	target := clean(p.env.cwd(), f)
	fi, err := p.env.srv.fs.stat(target)
	if err != nil {
		return target, fi, err
	}
	if !p.root && fi.uid != p.env.uid(false) {
		return target, fi, errNotPerm
	}
	return target, fi, nil
}

// setfaclCmd records POSIX ACL changes: setfacl [-bkndRLP] {-m|-x|--set acl | -M|-X file} path...
func setfaclCmd(p *proc, argv []string) int {
	var ops, files []string
	args := argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case a == "-m" || a == "-x" || a == "-M" || a == "-X" || a == "--set" || a == "--set-file" || a == "--modify" || a == "--remove":
			if i+1 >= len(args) {
				p.printf("setfacl: option requires an argument -- '%s'\nTry `setfacl --help' for more information.\n", strings.TrimLeft(a, "-"))
				return 2
			}
			if (a == "-m" || a == "-x" || a == "--set" || a == "--modify" || a == "--remove") && !validACL(args[i+1], a == "-x" || a == "--remove") {
				p.printf("setfacl: Option %s: Invalid argument near character 1\n", a)
				return 2
			}
			ops = append(ops, a+" "+args[i+1])
			i++
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for _, c := range a[1:] {
				if !strings.ContainsRune("bkndRLPv", c) && !strings.HasPrefix(a, "--") {
					p.printf("setfacl: invalid option -- '%c'\nTry `setfacl --help' for more information.\n", c)
					return 2
				}
			}
			ops = append(ops, a)
		default:
			files = append(files, a)
		}
	}
	if len(ops) == 0 || len(files) == 0 {
		p.printf("Usage: setfacl [-bkndRLP] { -m|-M|-x|-X ... } file ...\nTry `setfacl --help' for more information.\n")
		return 2
	}
	st := 0
	for _, f := range files {
		target, fi, err := p.aclTarget(f)
		if err == nil {
			err = p.env.srv.fs.addACL(target, fi, []string{"setfacl " + strings.Join(ops, " ")})
		}
		if err != nil {
			p.printf("setfacl: %s: %v\n", f, err)
			st = 1
		}
	}
	return st
}

// validACL checks entries like u:1000:rwx, g::r-x, o::---, d:u:alice:rw
// (removal entries have no permissions).
func validACL(spec string, removal bool) bool {
	for _, e := range strings.Split(spec, ",") {
		f := strings.Split(e, ":")
		if len(f) > 0 && (f[0] == "d" || f[0] == "default") {
			f = f[1:]
		}
		if len(f) < 1 {
			return false
		}
		switch f[0] {
		case "u", "user", "g", "group", "m", "mask", "o", "other":
		default:
			return false
		}
		if removal {
			if len(f) > 2 {
				return false
			}
			continue
		}
		if len(f) != 3 || strings.Trim(f[2], "rwxX-") != "" || f[2] == "" {
			if !(len(f) == 2 && (f[0] == "o" || f[0] == "other" || f[0] == "m" || f[0] == "mask")) {
				return false
			}
		}
	}
	return true
}

// nfs4SetfaclCmd records NFSv4 ACL changes: nfs4_setfacl [-R] {-a|-x|-s acl_spec | -A|-S|-X file | -m from to} path...
func nfs4SetfaclCmd(p *proc, argv []string) int {
	var ops, files []string
	args := argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "-a", "-A", "-s", "-S", "-x", "-X", "--set-spec", "--add-spec", "--remove-spec":
			if i+1 >= len(args) {
				p.printf("nfs4_setfacl: option %s requires an argument\n", a)
				return 1
			}
			if (a == "-a" || a == "-s") && !validNFS4ACE(args[i+1]) {
				p.printf("Failed while inserting ACE(s).\n")
				return 1
			}
			ops = append(ops, a+" "+args[i+1])
			i++
		case "-m":
			if i+2 >= len(args) {
				p.printf("nfs4_setfacl: option -m requires two arguments\n")
				return 1
			}
			ops = append(ops, "-m "+args[i+1]+" "+args[i+2])
			i += 2
		case "-i":
			if i+1 >= len(args) {
				p.printf("nfs4_setfacl: option -i requires an argument\n")
				return 1
			}
			ops = append(ops, "-i "+args[i+1])
			i++
		case "-R", "-L", "-P", "--test", "--recursive":
			ops = append(ops, a)
		default:
			files = append(files, a)
		}
	}
	if len(ops) == 0 || len(files) == 0 {
		p.printf("Usage: nfs4_setfacl [OPTIONS] COMMAND file...\n")
		return 1
	}
	st := 0
	for _, f := range files {
		target, fi, err := p.aclTarget(f)
		if err == nil {
			err = p.env.srv.fs.addACL(target, fi, []string{"nfs4_setfacl " + strings.Join(ops, " ")})
		}
		if err != nil {
			p.printf("nfs4_setfacl: %s: %v\n", f, err)
			st = 1
		}
	}
	return st
}

// validNFS4ACE checks type:flags:principal:permissions entries.
func validNFS4ACE(spec string) bool {
	for _, e := range strings.Split(spec, ",") {
		f := strings.Split(e, ":")
		if len(f) != 4 || strings.IndexByte("ADUL", f[0][0]) < 0 || len(f[0]) != 1 || f[2] == "" {
			return false
		}
	}
	return true
}

func touchCmd(p *proc, argv []string) int {
	opts, _, files := splitOpts(argv[1:], "dtr")
	if len(files) == 0 {
		return missingOperand(p, "touch", nil)
	}
	v := p.env.srv.fs
	st := 0
	for _, f := range files {
		target := clean(p.env.cwd(), f)
		fi, err := v.stat(target)
		if err == nil {
			if fi.real != "" && fi.kind != kindBlock {
				now := time.Now()
				os.Chtimes(fi.real, now, now)
			}
			continue
		}
		if hasOpt(opts, "c") {
			continue
		}
		if perr := v.parentDir(target); perr != nil {
			p.printf("touch: cannot touch '%s': %v\n", f, perr)
			st = 1
			continue
		}
		if !mayWrite(target, p.env.user, p.root) {
			p.printf("touch: cannot touch '%s': %v\n", f, errPerm)
			st = 1
			continue
		}
		if err := v.touch(target, p.env.uid(p.root)); err != nil {
			p.printf("touch: cannot touch '%s': %v\n", f, err)
			st = 1
		}
	}
	return st
}

func mkdirCmd(p *proc, argv []string) int {
	opts, values, dirs := splitOpts(argv[1:], "m")
	if len(dirs) == 0 {
		return missingOperand(p, "mkdir", nil)
	}
	mode := uint32(0o755)
	if m, ok := values["m"]; ok {
		apply, err := parseMode(m)
		if err != nil {
			p.printf("mkdir: invalid mode '%s'\n", m)
			return 1
		}
		mode = apply(0o777, true)
	}
	parents := hasOpt(opts, "p", "--parents")
	v := p.env.srv.fs
	st := 0
	for _, d := range dirs {
		target := clean(p.env.cwd(), d)
		if err := p.mkdir(v, target, mode, parents); err != nil {
			p.printf("mkdir: cannot create directory '%s': %v\n", d, err)
			st = 1
		}
	}
	return st
}

func (p *proc) mkdir(v *vfs, target string, mode uint32, parents bool) error {
	fi, err := v.stat(target)
	if err == nil {
		if parents && fi.kind == kindDir {
			return nil
		}
		return errExist
	}
	if parents && target != "/" {
		if err := p.mkdir(v, path.Dir(target), 0o755, true); err != nil {
			return err
		}
	}
	if err := v.parentDir(target); err != nil {
		return err
	}
	if !mayWrite(target, p.env.user, p.root) {
		return errPerm
	}
	return v.mkdir(target, mode, p.env.uid(p.root))
}
