package zfsssh

import "strings"

// setfacl and nfs4_setfacl: ACL changes are checked and recorded, not enforced.

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
