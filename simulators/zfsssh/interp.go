package zfsssh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"sync"
)

// stdio is a command's three standard streams.
type stdio struct {
	in  io.Reader
	out io.Writer
	err io.Writer
}

// shell interprets one script: an exec request's command line, a line of an
// interactive session, or the argument of a nested "sh -c".
type shell struct {
	env    *sessionEnv
	root   bool   // effective uid 0
	name   string // $0, also the prefix of the shell's own error messages
	args   []string
	vars   map[string]string
	status int // $?
	depth  int
	bash   bool // bash's wording instead of dash's
	exited bool
	// framing: this shell reads programs from a shell session's channel
	// (see readScript in shellsession.go); its own commands are the
	// driver's framing, the programs' commands run in the "sh -c" below.
	framing bool
}

func newShell(env *sessionEnv, root bool, name string, depth int) *shell {
	return &shell{env: env, root: root, name: name, depth: depth, vars: map[string]string{}, bash: name == "bash"}
}

func (sh *shell) errPrefix(line int) string {
	if sh.bash {
		return fmt.Sprintf("%s: line %d: ", sh.name, line)
	}
	return fmt.Sprintf("%s: %d: ", sh.name, line)
}

// run parses and runs src one complete command at a time, like sh: the lines
// before a syntax error run, the error ends the script with status 2.
func (sh *shell) run(ctx context.Context, src string, std stdio) int {
	p := &parser{toks: lex(src)}
	for !sh.exited && ctx.Err() == nil {
		list, err := p.nextList()
		if err != nil {
			sh.syntaxError(err, std.err)
			sh.status = 2
			return sh.status
		}
		if list == nil {
			break
		}
		sh.runList(ctx, list, std)
	}
	return sh.status
}

// runScript runs a text parsed by parseScript as run would run it: the
// lists in order, then the syntax error that ended the parse, if any; the
// status is left in sh.status.
func (sh *shell) runScript(ctx context.Context, sc script, std stdio) {
	for _, list := range sc.lists {
		if sh.exited || ctx.Err() != nil {
			return
		}
		sh.runList(ctx, list, std)
	}
	if sc.err != nil && !sh.exited && ctx.Err() == nil {
		sh.syntaxError(sc.err, std.err)
		sh.status = 2
	}
}

func (sh *shell) syntaxError(err error, w io.Writer) {
	var se *syntaxError
	if errors.As(err, &se) {
		if sh.bash {
			fmt.Fprintf(w, "%ssyntax error: %s\n", sh.errPrefix(se.line), se.msg)
			return
		}
		fmt.Fprintf(w, "%s%s\n", sh.errPrefix(se.line), se.Error())
		return
	}
	fmt.Fprintf(w, "%s: %v\n", sh.name, err)
}

func (sh *shell) runList(ctx context.Context, list []*andOr, std stdio) {
	for _, ao := range list {
		if sh.exited || ctx.Err() != nil {
			return
		}
		sh.status = sh.runAndOr(ctx, ao, std)
	}
}

func (sh *shell) runAndOr(ctx context.Context, ao *andOr, std stdio) int {
	st := sh.runPipeline(ctx, ao.pipes[0], std)
	for i, op := range ao.ops {
		if sh.exited || ctx.Err() != nil {
			break
		}
		if (op == "&&" && st == 0) || (op == "||" && st != 0) {
			sh.status = st
			st = sh.runPipeline(ctx, ao.pipes[i+1], std)
		}
	}
	return st
}

// runPipeline connects the commands with io.Pipe so that, for example,
// "zfs send | zfs receive" streams instead of buffering.
func (sh *shell) runPipeline(ctx context.Context, pl *pipeline, std stdio) int {
	var st int
	if len(pl.cmds) == 1 {
		st = sh.runSimple(ctx, pl.cmds[0], std)
	} else {
		st = sh.runPiped(ctx, pl.cmds, std)
	}
	if pl.negate {
		if st == 0 {
			return 1
		}
		return 0
	}
	return st
}

func (sh *shell) runPiped(ctx context.Context, cmds []*simpleCmd, std stdio) int {
	n := len(cmds)
	readers := make([]*io.PipeReader, n-1)
	writers := make([]*io.PipeWriter, n-1)
	for i := range n - 1 {
		readers[i], writers[i] = io.Pipe()
	}
	// A cancelled session must not leave a command blocked on a pipe.
	stop := context.AfterFunc(ctx, func() {
		for i := range readers {
			readers[i].CloseWithError(context.Canceled)
			writers[i].CloseWithError(context.Canceled)
		}
	})
	defer stop()
	status := make([]int, n)
	var wg sync.WaitGroup
	for i, c := range cmds {
		cio := stdio{in: std.in, out: std.out, err: std.err}
		if i > 0 {
			cio.in = readers[i-1]
		}
		if i < n-1 {
			cio.out = writers[i]
		}
		// Each side of a pipeline runs in its own subshell.
		sub := &shell{env: sh.env, root: sh.root, name: sh.name, args: sh.args, vars: maps.Clone(sh.vars), status: sh.status, depth: sh.depth, bash: sh.bash}
		wg.Add(1)
		go func() {
			defer wg.Done()
			status[i] = sub.runSimple(ctx, c, cio)
			if i < n-1 {
				writers[i].Close()
			}
			if i > 0 {
				// Like SIGPIPE: writers upstream fail once the reader is gone.
				readers[i-1].CloseWithError(io.ErrClosedPipe)
			}
		}()
	}
	wg.Wait()
	return status[n-1]
}

func (sh *shell) runSimple(ctx context.Context, c *simpleCmd, std stdio) int {
	argv := make([]string, 0, len(c.words))
	for _, w := range c.words {
		argv = sh.expandInto(argv, w)
	}
	cio, closers, err := sh.applyRedirects(c, std)
	defer func() {
		for _, cl := range closers {
			cl.Close()
		}
	}()
	if err != nil {
		fmt.Fprintf(std.err, "%s%v\n", sh.errPrefix(c.line), err)
		return 2
	}
	if len(argv) == 0 {
		for _, a := range c.assigns {
			sh.vars[a.name] = strings.Join(sh.expand(a.value), " ")
		}
		return 0
	}
	srv := sh.env.srv
	if sh.framing {
		return sh.exec(ctx, argv, cio, c.line)
	}
	rec := srv.startRecord(sh.env, argv, sh.depth, sh.root)
	victim := srv.faults.TakeDrop()
	if victim {
		// The command still takes effect, but nothing it prints (nor its
		// exit status) reaches the client: the connection drops first.
		cio.out, cio.err = io.Discard, io.Discard
	}
	st := sh.exec(ctx, argv, cio, c.line)
	srv.finishRecord(rec, st)
	if victim {
		sh.env.dropConnection()
	}
	return st
}

// exec runs one command: a shell builtin, else a program found via Paths.
func (sh *shell) exec(ctx context.Context, argv []string, std stdio, line int) int {
	p := &proc{ctx: ctx, env: sh.env, root: sh.root, std: std, depth: sh.depth, framing: sh.framing}
	switch argv[0] {
	case "echo", "test", "[", "true", ":", "false":
		if sh.framing {
			break
		}
		// Builtins are commands too for fault injection.
		if st, failed := sh.env.srv.applyFaults(p, argv[0]); failed {
			return st
		}
	}
	switch argv[0] {
	case "echo":
		return echoCmd(argv, std.out, !sh.bash)
	case "test", "[":
		return testCmd(p, argv, sh.errPrefix(line)+argv[0]+": ")
	case "true", ":":
		return 0
	case "false":
		return 1
	case "exit":
		sh.exited = true
		if len(argv) > 1 {
			n, err := strconv.Atoi(argv[1])
			if err != nil || n < 0 {
				fmt.Fprintf(std.err, "%sexit: Illegal number: %s\n", sh.errPrefix(line), argv[1])
				return 2
			}
			return n & 0xff
		}
		return sh.status
	}
	prog, file, ok := sh.env.srv.resolve(argv[0])
	if !ok {
		switch {
		case sh.bash && strings.Contains(argv[0], "/"):
			fmt.Fprintf(std.err, "%s%s: No such file or directory\n", sh.errPrefix(line), argv[0])
		case sh.bash:
			fmt.Fprintf(std.err, "%s%s: command not found\n", sh.errPrefix(line), argv[0])
		default:
			fmt.Fprintf(std.err, "%s%s: not found\n", sh.errPrefix(line), argv[0])
		}
		return 127
	}
	p.path = file
	return sh.env.srv.runProgram(p, prog, argv)
}

// expandInto appends w's fields to argv. A literal word (one part, no
// parameter: nearly every word of a driver's program) is its own text,
// one field unless it is an unquoted empty text, as expand makes it; it
// skips expand's builder and field list, an allocation and a copy per word.
func (sh *shell) expandInto(argv []string, w *word) []string {
	if len(w.parts) == 1 && w.parts[0].param == "" {
		if p := w.parts[0]; p.quoted || p.text != "" {
			return append(argv, p.text)
		}
		return argv
	}
	return append(argv, sh.expand(w)...)
}

// expand turns a word into fields. Only parameters are expanded; values
// from unquoted parameters are split on blanks like sh's field splitting.
func (sh *shell) expand(w *word) []string {
	var fields []string
	var cur strings.Builder
	have := false
	split := func(v string) {
		parts := strings.Fields(v)
		if len(parts) == 0 {
			if v != "" && have { // a separator ends the current field
				fields = append(fields, cur.String())
				cur.Reset()
				have = false
			}
			return
		}
		if v[0] == ' ' || v[0] == '\t' || v[0] == '\n' {
			if have {
				fields = append(fields, cur.String())
				cur.Reset()
				have = false
			}
		}
		for i, p := range parts {
			if i > 0 {
				fields = append(fields, cur.String())
				cur.Reset()
			}
			cur.WriteString(p)
			have = true
		}
		last := v[len(v)-1]
		if last == ' ' || last == '\t' || last == '\n' {
			fields = append(fields, cur.String())
			cur.Reset()
			have = false
		}
	}
	for _, p := range w.parts {
		if p.param == "" {
			cur.WriteString(p.text)
			if p.quoted || p.text != "" {
				have = true
			}
			continue
		}
		switch {
		case p.param == "@" && p.quoted:
			for i, a := range sh.args {
				if i > 0 {
					fields = append(fields, cur.String())
					cur.Reset()
				}
				cur.WriteString(a)
				have = true
			}
		case p.param == "@" || (p.param == "*" && !p.quoted):
			split(strings.Join(sh.args, " "))
		case p.quoted:
			cur.WriteString(sh.param(p.param))
			have = true
		default:
			split(sh.param(p.param))
		}
	}
	if have {
		fields = append(fields, cur.String())
	}
	return fields
}

func (sh *shell) param(name string) string {
	switch name {
	case "0":
		return sh.name
	case "?":
		return strconv.Itoa(sh.status)
	case "#":
		return strconv.Itoa(len(sh.args))
	case "*":
		return strings.Join(sh.args, " ")
	case "$":
		return strconv.FormatUint(4096+sh.env.id%28000, 10)
	case "!", "-":
		return ""
	}
	if isDigits(name) {
		n, _ := strconv.Atoi(name)
		if n >= 1 && n <= len(sh.args) {
			return sh.args[n-1]
		}
		return ""
	}
	return sh.vars[name]
}
