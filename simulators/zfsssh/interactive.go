package zfsssh

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// interactive runs a "shell" session: read a line, run it, repeat. With a
// pty the session behaves like a terminal (echo, erase, ^C, ^D, prompts
// "$ " or "# "); without one, like sh reading a script from a pipe.
func (s *session) interactive(stdin io.Reader, out, errw io.Writer) int {
	sh := newShell(s.env, s.env.user.root, s.env.user.shellName(), 0)
	in := bufio.NewReader(stdin)
	var read func(prompt string) (string, error)
	if s.env.pty {
		read = func(prompt string) (string, error) {
			io.WriteString(out, prompt)
			s.env.wait() // the prompt is out before the shell waits for a line
			return ttyReadLine(in, out)
		}
	} else {
		read = func(string) (string, error) {
			s.env.wait() // the last command's output, before the next line
			line, err := in.ReadString('\n')
			if err != nil && line != "" {
				return strings.TrimSuffix(line, "\n"), nil
			}
			return strings.TrimSuffix(line, "\n"), err
		}
	}
	ps1 := "$ "
	if s.env.user.root {
		ps1 = "# "
	}
	var pending strings.Builder
	for s.ctx.Err() == nil && !sh.exited {
		prompt := ps1
		if pending.Len() > 0 {
			prompt = "> "
		}
		line, err := read(prompt)
		if errors.Is(err, errInterrupt) {
			pending.Reset()
			continue
		}
		if err != nil {
			if pending.Len() > 0 {
				// sh reports the incomplete command at end of input.
				s.env.line = pending.String()
				sh.run(s.ctx, pending.String(), stdio{in: in, out: out, err: errw})
			}
			break
		}
		pending.WriteString(line)
		pending.WriteString("\n")
		sc, more := parseScript(pending.String())
		if more {
			continue
		}
		src := pending.String()
		pending.Reset()
		s.env.line = strings.TrimSuffix(src, "\n")
		sh.runScript(s.ctx, sc, stdio{in: in, out: out, err: errw})
	}
	return sh.status
}

// script is a command text parsed once: its lists up to the first syntax
// error, and that error. A shell reading its input line by line parses
// each line to learn whether the command is complete; running what it
// parsed, instead of lexing and parsing the text again, halves that work
// for every program a driver's shell session sends (issue 16).
type script struct {
	lists [][]*andOr
	err   error
}

// parseScript parses src; more reports a text that needs more lines (an
// open quote, a trailing "&&" or "|").
func parseScript(src string) (sc script, more bool) {
	sc, more, _ = parseScriptQuote(src)
	return sc, more
}

// parseScriptQuote is parseScript that also reports, for a text that
// needs more lines because a quoted string is unterminated, which quote
// is open (stillOpen).
func parseScriptQuote(src string) (sc script, more bool, open byte) {
	p := &parser{toks: lex(src)}
	for {
		list, err := p.nextList()
		if err != nil {
			var se *syntaxError
			if errors.As(err, &se) && se.incomplete {
				return script{}, true, se.openQuote
			}
			sc.err = err
			return sc, false, 0
		}
		if list == nil {
			return sc, false, 0
		}
		sc.lists = append(sc.lists, list)
	}
}

// stillOpen reports whether a text whose parse stopped at an unterminated
// quoted string (open, from parseScriptQuote) is still incomplete, and
// parses to the same, with line added: inside '...' only a ' ends the
// string; inside "..." also what the lexer reads specially there ($, `
// and \). The tokens before the string are the same, so the parser stops
// at the same place. A driver's program reaches a session's sh as one
// command of many lines (sh -c '<program>'): without this each line read
// lexed and parsed the whole text again, quadratic in its lines.
func stillOpen(open byte, line string) bool {
	switch open {
	case '\'':
		return stillInSingleQuotes(line)
	case '"':
		return !strings.ContainsAny(line, "\"$`\\")
	}
	return false
}

// stillInSingleQuotes is stillOpen inside '...': a line without a ' keeps
// the string open, and so does one whose every closing ' is followed, in
// the same word, only by escaped characters (\x) and then a ' that opens
// the next string, as long as the last one stays open: the lexer reads
// such a run as one word and stops at the same open quote. That is how a
// driver quotes a ' inside the single-quoted program it sends (close the
// string, an escaped quote, open the next one):
// without this, each line holding one parsed the whole text again.
func stillInSingleQuotes(line string) bool {
	for i := 0; ; {
		j := strings.IndexByte(line[i:], '\'')
		if j < 0 {
			return true // the string stays open to the end of the line
		}
		i += j + 1 // closed: escapes, then a ' to open again
		for {
			switch {
			case i < len(line) && line[i] == '\'':
				i++
			case i+1 < len(line) && line[i] == '\\' && line[i+1] != '\n':
				i += 2
				continue
			default:
				return false // anything else: the full parse decides
			}
			break
		}
	}
}

var errInterrupt = errors.New("interrupt")

// ttyReadLine is a terminal's canonical mode: it echoes what is typed,
// handles erase (DEL, ^H), kill (^U), interrupt (^C) and end of file (^D on
// an empty line), and ends a line on CR or LF.
func ttyReadLine(in *bufio.Reader, echo io.Writer) (string, error) {
	var line []byte
	for {
		b, err := in.ReadByte()
		if err != nil {
			if len(line) > 0 {
				return string(line), nil
			}
			return "", err
		}
		switch b {
		case '\r', '\n':
			io.WriteString(echo, "\n")
			return string(line), nil
		case 0x7f, 0x08:
			if len(line) > 0 {
				_, size := utf8.DecodeLastRune(line)
				line = line[:len(line)-size]
				io.WriteString(echo, "\b \b")
			}
		case 0x15:
			for range utf8.RuneCount(line) {
				io.WriteString(echo, "\b \b")
			}
			line = line[:0]
		case 0x03:
			io.WriteString(echo, "^C\n")
			return "", errInterrupt
		case 0x04:
			if len(line) == 0 {
				return "", io.EOF
			}
		case 0x1b:
			// Skip a CSI sequence (arrow keys): no line editing here.
			if next, err := in.ReadByte(); err == nil && next == '[' {
				for {
					c, err := in.ReadByte()
					if err != nil || (c >= 0x40 && c <= 0x7e) {
						break
					}
				}
			}
		default:
			if b >= 0x20 || b == '\t' {
				line = append(line, b)
				echo.Write([]byte{b})
			}
		}
	}
}
