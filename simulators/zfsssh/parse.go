package zfsssh

import "fmt"

// The grammar is the subset of POSIX sh that drivers use:
//
//	script   := linebreak (list newline+)* list?
//	list     := andor ((';') andor)* ';'?
//	andor    := pipeline (('&&' | '||') linebreak pipeline)*
//	pipeline := '!'? command ('|' linebreak command)*
//	command  := (assignment | redirect)* word (word | redirect)*
//
// Compound commands, subshells, background jobs and functions are refused
// with a clear syntax error rather than misread.

type andOr struct {
	pipes []*pipeline
	ops   []string // ops[i] joins pipes[i] and pipes[i+1]: "&&" or "||"
}

type pipeline struct {
	negate bool
	cmds   []*simpleCmd
}

type simpleCmd struct {
	assigns []assignment
	words   []*word
	redirs  []redirect
	line    int
}

type assignment struct {
	name  string
	value *word
}

type redirect struct {
	fd     int // -1 = the operator's default
	op     string
	target *word
}

type parser struct {
	toks []token
	pos  int
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token { //nolint:unparam // returns the token it consumed; today's callers do not need it
	t := p.toks[p.pos]
	if t.kind != tEOF && t.kind != tErr {
		p.pos++
	}
	return t
}

func (p *parser) skipNewlines() {
	for p.peek().kind == tNewline {
		p.next()
	}
}

// nextList parses the next top-level list (up to a newline). It returns nil
// at the end of the input. Like sh, callers run each list before parsing the
// next one, so lines before a syntax error still run.
func (p *parser) nextList() ([]*andOr, error) {
	p.skipNewlines()
	if p.peek().kind == tEOF {
		return nil, nil
	}
	var list []*andOr
	for {
		ao, err := p.andOr()
		if err != nil {
			return nil, err
		}
		list = append(list, ao)
		t := p.peek()
		switch {
		case t.kind == tOp && t.op == ";":
			p.next()
			if n := p.peek(); n.kind == tNewline || n.kind == tEOF {
				return list, nil
			}
		case t.kind == tOp && t.op == "&":
			return nil, &syntaxError{line: t.line, msg: "background jobs (&) are not supported by the simulator"}
		case t.kind == tNewline || t.kind == tEOF:
			return list, nil
		default:
			return nil, unexpected(t)
		}
	}
}

func unexpected(t token) error {
	switch t.kind {
	case tErr:
		return t.err
	case tEOF:
		return &syntaxError{line: t.line, msg: "end of file unexpected", incomplete: true}
	case tNewline:
		return &syntaxError{line: t.line, msg: "newline unexpected"}
	case tOp:
		return &syntaxError{line: t.line, msg: fmt.Sprintf("%q unexpected", t.op)}
	}
	s, _ := t.word.literal()
	return &syntaxError{line: t.line, msg: fmt.Sprintf("%q unexpected", s)}
}

func (p *parser) andOr() (*andOr, error) {
	ao := &andOr{}
	for {
		pl, err := p.pipeline()
		if err != nil {
			return nil, err
		}
		ao.pipes = append(ao.pipes, pl)
		t := p.peek()
		if t.kind != tOp || (t.op != "&&" && t.op != "||") {
			return ao, nil
		}
		p.next()
		ao.ops = append(ao.ops, t.op)
		p.skipNewlines()
	}
}

func (p *parser) pipeline() (*pipeline, error) {
	pl := &pipeline{}
	if t := p.peek(); t.kind == tWord {
		if s, ok := t.word.literal(); ok && s == "!" {
			p.next()
			pl.negate = true
		}
	}
	for {
		c, err := p.command()
		if err != nil {
			return nil, err
		}
		pl.cmds = append(pl.cmds, c)
		t := p.peek()
		if t.kind != tOp || t.op != "|" {
			return pl, nil
		}
		p.next()
		p.skipNewlines()
	}
}

var compoundWords = map[string]bool{"if": true, "while": true, "until": true, "for": true, "case": true, "{": true}
var closingWords = map[string]bool{"then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true, "esac": true, "}": true, "in": true}

func isRedirOp(op string) bool {
	switch op {
	case "<", ">", ">>", "<&", ">&", "<>", ">|":
		return true
	}
	return false
}

func (p *parser) command() (*simpleCmd, error) {
	t := p.peek()
	// The command's words, sized once: a driver's zfs create has dozens,
	// which grew the list seven times over.
	n := 0
	for n < len(p.toks)-p.pos && p.toks[p.pos+n].kind == tWord {
		n++
	}
	c := &simpleCmd{line: t.line, words: make([]*word, 0, n)}
	if t.kind == tOp && t.op == "(" {
		return nil, &syntaxError{line: t.line, msg: "subshells ( ... ) are not supported by the simulator"}
	}
	if t.kind == tWord {
		if s, ok := t.word.literal(); ok {
			if compoundWords[s] {
				return nil, &syntaxError{line: t.line, msg: fmt.Sprintf("compound commands (%s ...) are not supported by the simulator", s)}
			}
			if closingWords[s] {
				return nil, unexpected(t)
			}
		}
	}
	for {
		t := p.peek()
		switch {
		case t.kind == tWord:
			p.next()
			if len(c.words) == 0 {
				if a, ok := asAssignment(t.word); ok {
					c.assigns = append(c.assigns, a)
					continue
				}
			}
			c.words = append(c.words, t.word)
		case t.kind == tOp && isRedirOp(t.op):
			p.next()
			target := p.peek()
			if target.kind != tWord {
				if target.kind == tEOF {
					return nil, &syntaxError{line: target.line, msg: "newline unexpected"}
				}
				return nil, unexpected(target)
			}
			p.next()
			c.redirs = append(c.redirs, redirect{fd: t.fd, op: t.op, target: target.word})
		case t.kind == tOp && t.op == "(" && len(c.words) == 1:
			return nil, &syntaxError{line: t.line, msg: "function definitions are not supported by the simulator"}
		default:
			if len(c.words) == 0 && len(c.assigns) == 0 && len(c.redirs) == 0 {
				return nil, unexpected(t)
			}
			return c, nil
		}
	}
}

// asAssignment recognises NAME=value words before the command name.
func asAssignment(w *word) (assignment, bool) {
	if len(w.parts) == 0 || w.parts[0].param != "" || w.parts[0].quoted {
		return assignment{}, false
	}
	first := w.parts[0].text
	eq := -1
	for i := 0; i < len(first); i++ {
		if first[i] == '=' {
			eq = i
			break
		}
	}
	if eq <= 0 || !validName(first[:eq]) {
		return assignment{}, false
	}
	rest := &word{}
	if v := first[eq+1:]; v != "" {
		rest.parts = append(rest.parts, wordPart{text: v})
	}
	rest.parts = append(rest.parts, w.parts[1:]...)
	return assignment{name: first[:eq], value: rest}, true
}

func validName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameChar(s[i]) {
			return false
		}
	}
	return true
}
