package zfsssh

import (
	"strconv"
)

// testCmd is test(1) and [ ... ]: file tests against the virtual
// filesystem, string and integer comparisons, !, -a, -o and parentheses.
// prefix starts error messages ("sh: 1: test: " for the dash builtin).
func testCmd(p *proc, argv []string, prefix string) int {
	args := argv[1:]
	if argv[0] == "[" || (len(argv[0]) > 2 && argv[0][len(argv[0])-2:] == "/[") {
		if len(args) == 0 || args[len(args)-1] != "]" {
			p.printf("%smissing ]\n", prefix)
			return 2
		}
		args = args[:len(args)-1]
	}
	if len(args) == 0 {
		return 1
	}
	t := &testEval{p: p, args: args}
	ok, err := t.expr()
	if err == nil && t.pos < len(t.args) {
		err = testError(t.args[t.pos] + ": unexpected operator")
	}
	if err != nil {
		p.printf("%s%s\n", prefix, err)
		return 2
	}
	if ok {
		return 0
	}
	return 1
}

type testError string

func (e testError) Error() string { return string(e) }

type testEval struct {
	p    *proc
	args []string
	pos  int
}

func (t *testEval) more(n int) bool { return t.pos+n <= len(t.args) }

func (t *testEval) expr() (bool, error) {
	v, err := t.and()
	for err == nil && t.more(1) && t.args[t.pos] == "-o" {
		t.pos++
		var r bool
		r, err = t.and()
		v = v || r
	}
	return v, err
}

func (t *testEval) and() (bool, error) {
	v, err := t.not()
	for err == nil && t.more(1) && t.args[t.pos] == "-a" {
		t.pos++
		var r bool
		r, err = t.not()
		v = v && r
	}
	return v, err
}

func (t *testEval) not() (bool, error) {
	if t.more(2) && t.args[t.pos] == "!" {
		t.pos++
		v, err := t.not()
		return !v, err
	}
	return t.primary()
}

var binaryOps = map[string]bool{"=": true, "==": true, "!=": true, "<": true, ">": true,
	"-eq": true, "-ne": true, "-gt": true, "-ge": true, "-lt": true, "-le": true, "-nt": true, "-ot": true, "-ef": true}

var unaryOps = map[string]bool{"-b": true, "-c": true, "-d": true, "-e": true, "-f": true, "-g": true, "-h": true,
	"-L": true, "-k": true, "-p": true, "-r": true, "-s": true, "-S": true, "-t": true, "-u": true, "-w": true,
	"-x": true, "-n": true, "-z": true, "-O": true, "-G": true}

func (t *testEval) primary() (bool, error) {
	if !t.more(1) {
		return false, testError("argument expected")
	}
	a := t.args[t.pos]
	if t.more(3) && binaryOps[t.args[t.pos+1]] {
		t.pos += 3
		return t.binary(a, t.args[t.pos-2], t.args[t.pos-1])
	}
	if a == "(" && t.more(3) {
		t.pos++
		v, err := t.expr()
		if err != nil {
			return false, err
		}
		if !t.more(1) || t.args[t.pos] != ")" {
			return false, testError("closing paren expected")
		}
		t.pos++
		return v, nil
	}
	if unaryOps[a] && t.more(2) {
		t.pos += 2
		return t.unary(a, t.args[t.pos-1]), nil
	}
	t.pos++
	return a != "", nil
}

func (t *testEval) binary(l, op, r string) (bool, error) {
	switch op {
	case "=", "==":
		return l == r, nil
	case "!=":
		return l != r, nil
	case "<":
		return l < r, nil
	case ">":
		return l > r, nil
	case "-nt", "-ot", "-ef":
		return false, nil
	}
	a, err := strconv.ParseInt(l, 10, 64)
	if err != nil {
		return false, testError("Illegal number: " + l)
	}
	b, err := strconv.ParseInt(r, 10, 64)
	if err != nil {
		return false, testError("Illegal number: " + r)
	}
	switch op {
	case "-eq":
		return a == b, nil
	case "-ne":
		return a != b, nil
	case "-gt":
		return a > b, nil
	case "-ge":
		return a >= b, nil
	case "-lt":
		return a < b, nil
	}
	return a <= b, nil
}

func (t *testEval) unary(op, arg string) bool {
	switch op {
	case "-n":
		return arg != ""
	case "-z":
		return arg == ""
	case "-t", "-h", "-L", "-p", "-S":
		return false // no terminals, symlinks, fifos or sockets here
	}
	p := t.p
	fi, err := p.env.srv.fs.stat(clean(p.env.cwd(), arg))
	if err != nil {
		return false
	}
	switch op {
	case "-e":
		return true
	case "-f":
		return fi.kind == kindFile
	case "-d":
		return fi.kind == kindDir
	case "-b":
		return fi.kind == kindBlock
	case "-c":
		return fi.kind == kindChar
	case "-s":
		return fi.size > 0
	case "-u":
		return fi.mode&0o4000 != 0
	case "-g":
		return fi.mode&0o2000 != 0
	case "-k":
		return fi.mode&0o1000 != 0
	case "-O":
		return fi.uid == p.env.uid(p.root)
	case "-G":
		return fi.gid == p.env.uid(p.root)
	case "-r":
		return p.root || permits(fi, p.env.uid(false), 4)
	case "-w":
		return p.root || permits(fi, p.env.uid(false), 2)
	}
	// -x: even root needs an execute bit on files.
	if p.root {
		return fi.kind == kindDir || fi.mode&0o111 != 0
	}
	return permits(fi, p.env.uid(false), 1)
}

// permits applies the owner or "other" permission bits.
func permits(fi fileInfo, uid int, bit uint32) bool {
	if fi.uid == uid {
		return fi.mode&(bit<<6) != 0
	}
	return fi.mode&bit != 0
}
