package zfsssh

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// chmod and chown, with coreutils' wording (C locale).

func chmodCmd(p *proc, argv []string) int {
	opts, _, operands := splitOpts(argv[1:], "")
	// "chmod -w file": a mode, not an option.
	for _, o := range opts {
		if strings.Contains("rwxXst", o) { //nolint:gocritic // argOrder: o is one of these letters
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
				clearBits := who & 0o0777
				if a.who == 0 {
					clearBits = 0o0777
				}
				m = (m &^ clearBits) | bits
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
