package zfsssh

import (
	"errors"
	"strings"
)

// The tokenizer follows the POSIX sh token rules closely enough for what
// drivers send. It never evaluates anything: $(...), `...` and here-documents
// are refused at this stage, so the interpreter cannot run them by mistake.

type tokKind int

const (
	tWord tokKind = iota
	tOp
	tNewline
	tEOF
	tErr // a lexing error; the parser reports it when it gets there
)

type token struct {
	kind tokKind
	op   string // operator text for tOp
	fd   int    // explicit io number before a redirection operator, -1 if none
	word *word  // for tWord
	err  error  // for tErr
	line int
}

// wordPart is a piece of a word: literal text, or a parameter to expand.
type wordPart struct {
	text   string
	param  string // parameter name ("0", "?", "1", "HOME", "@" ...) when non-empty
	quoted bool
}

type word struct {
	parts []wordPart
	one   [1]wordPart // parts' first element: most words are one part, one allocation
}

// literal reports the word's text when it is one unquoted literal (used for
// reserved words and assignments).
func (w *word) literal() (string, bool) {
	if len(w.parts) != 1 || w.parts[0].param != "" || w.parts[0].quoted {
		return "", false
	}
	return w.parts[0].text, true
}

// syntaxError is a parse failure. incomplete marks input that could become
// valid with more lines (an interactive shell then asks for continuation).
type syntaxError struct {
	line       int
	msg        string
	incomplete bool
	// openQuote is the quote (' or ") an unterminated quoted string
	// leaves open at the end of the text.
	openQuote byte
}

func (e *syntaxError) Error() string { return "Syntax error: " + e.msg }

const (
	msgCmdSubst  = "command substitution $(...) is not supported by the simulator (it is never run)"
	msgBackquote = "command substitution `...` is not supported by the simulator (it is never run)"
	msgHeredoc   = "here-documents (<<) are not supported by the simulator"
)

type lexer struct {
	src   string
	pos   int
	line  int
	toks  []token
	words []word // the words are allocated from here, a chunk at a time
}

// lex tokenizes src. A lexing error ends the token list with a tErr token,
// so that (like sh) the complete commands before it still run.
func lex(src string) []token {
	// About a token per blank (at most a chunk's worth: a long quoted
	// string holds many), so a program's list is allocated once.
	lx := &lexer{src: src, line: 1, toks: make([]token, 0, min(strings.Count(src, " "), 64)+8)}
	if err := lx.run(); err != nil {
		line := lx.line
		if se := (*syntaxError)(nil); errors.As(err, &se) {
			line = se.line
		}
		lx.toks = append(lx.toks, token{kind: tErr, err: err, line: line, fd: -1})
	}
	return lx.toks
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func isMeta(c byte) bool {
	switch c {
	case ' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')':
		return true
	}
	return false
}

var operators = []string{"&&", "||", ";;", "<<-", "<<", "<>", "<&", ">>", ">&", ">|", ";", "&", "|", "(", ")", "<", ">"}

func (lx *lexer) run() error {
	for {
		// Blanks and line continuations between tokens.
		for lx.pos < len(lx.src) {
			c := lx.src[lx.pos]
			if isBlank(c) {
				lx.pos++
				continue
			}
			if c == '\\' && lx.pos+1 < len(lx.src) && lx.src[lx.pos+1] == '\n' {
				lx.pos += 2
				lx.line++
				continue
			}
			break
		}
		if lx.pos >= len(lx.src) {
			lx.toks = append(lx.toks, token{kind: tEOF, line: lx.line, fd: -1})
			return nil
		}
		c := lx.src[lx.pos]
		switch {
		case c == '#':
			for lx.pos < len(lx.src) && lx.src[lx.pos] != '\n' {
				lx.pos++
			}
		case c == '\n':
			lx.toks = append(lx.toks, token{kind: tNewline, line: lx.line, fd: -1})
			lx.pos++
			lx.line++
		case isMeta(c):
			if err := lx.operator(-1); err != nil {
				return err
			}
		default:
			if err := lx.word(); err != nil {
				return err
			}
		}
	}
}

func (lx *lexer) operator(fd int) error {
	for _, op := range operators {
		if strings.HasPrefix(lx.src[lx.pos:], op) {
			if op == "<<" || op == "<<-" {
				return &syntaxError{line: lx.line, msg: msgHeredoc}
			}
			lx.toks = append(lx.toks, token{kind: tOp, op: op, fd: fd, line: lx.line})
			lx.pos += len(op)
			return nil
		}
	}
	return &syntaxError{line: lx.line, msg: "unexpected character " + string(lx.src[lx.pos])}
}

// word reads one word; an all-digit word directly followed by < or > is an
// io number and becomes part of the redirection operator instead.
func (lx *lexer) word() error {
	startLine := lx.line
	if len(lx.words) == cap(lx.words) {
		lx.words = make([]word, 0, 16)
	}
	lx.words = append(lx.words, word{})
	w := &lx.words[len(lx.words)-1]
	w.parts = w.one[:0]
	lit := litBuf{w: w}
	start := lx.pos
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		if isMeta(c) {
			break
		}
		switch c {
		case '\'':
			end := strings.IndexByte(lx.src[lx.pos+1:], '\'')
			if end < 0 {
				return &syntaxError{line: startLine, msg: "Unterminated quoted string", incomplete: true, openQuote: '\''}
			}
			s := lx.src[lx.pos+1 : lx.pos+1+end]
			lx.line += strings.Count(s, "\n")
			lit.add(s, true)
			// An empty '' still makes a (quoted, empty) word.
			if s == "" {
				lit.flush()
				w.parts = append(w.parts, wordPart{quoted: true})
			}
			lx.pos += end + 2
		case '"':
			if err := lx.dquote(&lit, startLine); err != nil {
				return err
			}
		case '\\':
			if lx.pos+1 >= len(lx.src) {
				lit.add("\\", false)
				lx.pos++
				continue
			}
			n := lx.src[lx.pos+1 : lx.pos+2]
			lx.pos += 2
			if n == "\n" {
				lx.line++
				continue
			}
			lit.add(n, true)
		case '`':
			return &syntaxError{line: lx.line, msg: msgBackquote}
		case '$':
			lit.flush()
			part, err := lx.dollar(false)
			if err != nil {
				return err
			}
			if part.param == "" {
				lit.add(part.text, false)
			} else {
				w.parts = append(w.parts, part)
			}
		default:
			// A run of plain characters at once: one copy into lit, not
			// one growth per character (the lexer was a tenth of the
			// simulator's CPU per program: issue 16).
			end := lx.pos + 1
			for end < len(lx.src) && plainInWord(lx.src[end]) {
				end++
			}
			lit.add(lx.src[lx.pos:end], false)
			lx.pos = end
		}
	}
	lit.flush()
	raw := lx.src[start:lx.pos]
	if lx.pos < len(lx.src) && (lx.src[lx.pos] == '<' || lx.src[lx.pos] == '>') && isDigits(raw) {
		n := 0
		for _, d := range raw {
			n = n*10 + int(d-'0')
			if n > 9 {
				break
			}
		}
		return lx.operator(n)
	}
	lx.toks = append(lx.toks, token{kind: tWord, word: w, line: startLine, fd: -1})
	return nil
}

// litBuf collects the literal text of the word part being read, and its
// quotedness; a change of quotedness ends the part. Most parts are one run
// of the source (a plain word, one '...' string): such a part's text is a
// slice of the source, not a copy. Only a part joined from several runs
// (a"b"c, an escape inside a word) is built, in a buffer reused for every
// part of the word. The lexer's allocations were most of its cost, and it
// lexes every program twice, as sh does (issue 16).
type litBuf struct {
	w      *word
	s      string // the text, while it is one run (joined false)
	b      []byte // the text, once a second non-empty run joined it
	joined bool
	quoted bool
}

func (l *litBuf) len() int {
	if l.joined {
		return len(l.b)
	}
	return len(l.s)
}

// add appends s to the part, after ending the part so far if its
// quotedness differs.
func (l *litBuf) add(s string, quoted bool) {
	if l.len() > 0 && l.quoted != quoted {
		l.flush()
	}
	l.quoted = quoted
	switch {
	case s == "":
	case l.joined:
		l.b = append(l.b, s...)
	case l.s == "":
		l.s = s
	default:
		l.b = append(append(l.b[:0], l.s...), s...)
		l.joined, l.s = true, ""
	}
}

// flush ends the part: a non-empty text becomes a word part.
func (l *litBuf) flush() {
	if l.len() == 0 {
		return
	}
	text := l.s
	if l.joined {
		text = string(l.b)
	}
	l.w.parts = append(l.w.parts, wordPart{text: text, quoted: l.quoted})
	l.s, l.joined = "", false
}

// plainInWord: a character an unquoted word takes literally.
func plainInWord(c byte) bool {
	switch c {
	case '\'', '"', '\\', '`', '$':
		return false
	}
	return !isMeta(c)
}

// plainInDquote: a character a double-quoted string takes literally.
func plainInDquote(c byte) bool {
	switch c {
	case '"', '\\', '`', '$':
		return false
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// dquote reads a double-quoted string starting at the opening quote.
func (lx *lexer) dquote(lit *litBuf, startLine int) error {
	w := lit.w
	lx.pos++ // opening quote
	empty := true
	for {
		if lx.pos >= len(lx.src) {
			return &syntaxError{line: startLine, msg: "Unterminated quoted string", incomplete: true, openQuote: '"'}
		}
		c := lx.src[lx.pos]
		switch c {
		case '"':
			lx.pos++
			if empty {
				lit.flush()
				w.parts = append(w.parts, wordPart{quoted: true})
			}
			return nil
		case '\\':
			if lx.pos+1 < len(lx.src) {
				n := lx.src[lx.pos+1]
				switch n {
				case '$', '`', '"', '\\':
					lit.add(lx.src[lx.pos+1:lx.pos+2], true)
					lx.pos += 2
					empty = false
					continue
				case '\n':
					lx.pos += 2
					lx.line++
					continue
				}
			}
			lit.add("\\", true)
			lx.pos++
		case '`':
			return &syntaxError{line: lx.line, msg: msgBackquote}
		case '$':
			part, err := lx.dollar(true)
			if err != nil {
				return err
			}
			if part.param == "" {
				lit.add(part.text, true)
			} else {
				lit.flush()
				w.parts = append(w.parts, part)
			}
		default:
			end := lx.pos + 1
			for end < len(lx.src) && plainInDquote(lx.src[end]) {
				end++
			}
			run := lx.src[lx.pos:end]
			lx.line += strings.Count(run, "\n")
			lit.add(run, true)
			lx.pos = end
		}
		empty = false
	}
}

func isNameStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isNameChar(c byte) bool { return isNameStart(c) || (c >= '0' && c <= '9') }

// dollar reads an expansion starting at '$'. A '$' that starts no expansion
// is returned as literal text.
func (lx *lexer) dollar(quoted bool) (wordPart, error) {
	lx.pos++ // '$'
	if lx.pos >= len(lx.src) {
		return wordPart{text: "$", quoted: quoted}, nil
	}
	c := lx.src[lx.pos]
	switch {
	case c == '(':
		return wordPart{}, &syntaxError{line: lx.line, msg: msgCmdSubst}
	case c == '{':
		end := strings.IndexByte(lx.src[lx.pos:], '}')
		if end < 0 {
			return wordPart{}, &syntaxError{line: lx.line, msg: "Missing '}'", incomplete: true}
		}
		name := lx.src[lx.pos+1 : lx.pos+end]
		if !validParamName(name) {
			return wordPart{}, &syntaxError{line: lx.line, msg: "Bad substitution"}
		}
		lx.pos += end + 1
		return wordPart{param: name, quoted: quoted}, nil
	case strings.IndexByte("?$#@*!-0123456789", c) >= 0:
		lx.pos++
		return wordPart{param: string(c), quoted: quoted}, nil
	case isNameStart(c):
		start := lx.pos
		for lx.pos < len(lx.src) && isNameChar(lx.src[lx.pos]) {
			lx.pos++
		}
		return wordPart{param: lx.src[start:lx.pos], quoted: quoted}, nil
	}
	return wordPart{text: "$", quoted: quoted}, nil
}

func validParamName(name string) bool {
	if name == "" {
		return false
	}
	if len(name) == 1 && strings.IndexByte("?$#@*!-", name[0]) >= 0 {
		return true
	}
	if isDigits(name) {
		return true
	}
	if !isNameStart(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !isNameChar(name[i]) {
			return false
		}
	}
	return true
}
