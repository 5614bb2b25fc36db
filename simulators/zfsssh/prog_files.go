package zfsssh

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
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
	if fi.realPath != "" {
		return filepath.WalkDir(fi.realPath, func(realPath string, d fs.DirEntry, err error) error {
			if err != nil || realPath == fi.realPath {
				return err
			}
			rel, _ := filepath.Rel(fi.realPath, realPath)
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
			if fi.realPath != "" && fi.kind != kindBlock {
				now := time.Now()
				_ = os.Chtimes(fi.realPath, now, now)
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
