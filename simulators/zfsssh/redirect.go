package zfsssh

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// applyRedirects applies a command's redirections left to right, so that
// ">/dev/null 2>&1" and "2>&1 >/dev/null" differ as in sh. Errors carry
// dash's wording ("cannot create X: Directory nonexistent").
func (sh *shell) applyRedirects(c *simpleCmd, std stdio) (stdio, []io.Closer, error) {
	if len(c.redirs) == 0 {
		return std, nil, nil
	}
	var closers []io.Closer
	in, out, errw := std.in, std.out, std.err
	writer := func(fd int) io.Writer {
		if fd == 2 {
			return errw
		}
		return out
	}
	setWriter := func(fd int, w io.Writer) {
		switch fd {
		case 1:
			out = w
		case 2:
			errw = w
		}
	}
	env := sh.env
	for _, r := range c.redirs {
		target := strings.Join(sh.expand(r.target), " ")
		switch r.op {
		case ">", ">|", ">>":
			fd := r.fd
			if fd < 0 {
				fd = 1
			}
			var w io.Writer
			switch target {
			case "/dev/stdout":
				w = out
			case "/dev/stderr":
				w = errw
			default:
				p := clean(env.cwd(), target)
				if wc, ok, err := env.srv.nvmet.configfsHostFile(p, sh.root); ok {
					if err != nil {
						return std, closers, fmt.Errorf("cannot create %s: %s", target, createReason(err))
					}
					closers = append(closers, wc)
					setWriter(fd, wc)
					continue
				}
				wc, err := env.srv.fs.create(p, r.op == ">>", env.user, sh.root, env.uid(sh.root))
				if err != nil {
					return std, closers, fmt.Errorf("cannot create %s: %s", target, createReason(err))
				}
				closers = append(closers, wc)
				w = wc
			}
			setWriter(fd, w)
		case ">&", "<&":
			fd := r.fd
			if fd < 0 {
				fd = 1
				if r.op == "<&" {
					fd = 0
				}
			}
			switch target {
			case "-":
				if fd == 0 {
					in = strings.NewReader("")
				} else {
					setWriter(fd, io.Discard)
				}
			case "0", "1", "2":
				src := int(target[0] - '0')
				if fd == 0 || src == 0 {
					if fd == 0 && src == 0 {
						continue
					}
					return std, closers, errors.New("Syntax error: Bad fd number")
				}
				setWriter(fd, writer(src))
			default:
				return std, closers, errors.New("Syntax error: Bad fd number")
			}
		case "<", "<>":
			fd := r.fd
			if fd < 0 {
				fd = 0
			}
			p := clean(env.cwd(), target)
			rc, err := env.srv.fs.open(p)
			if err != nil {
				return std, closers, fmt.Errorf("cannot open %s: %s", target, openReason(err))
			}
			closers = append(closers, rc)
			if fd == 0 {
				in = rc
			}
		}
	}
	return stdio{in: in, out: out, err: errw}, closers, nil
}

func createReason(err error) string {
	switch {
	case errors.Is(err, errNotExist):
		return "Directory nonexistent"
	case errors.Is(err, errPerm):
		return "Permission denied"
	case errors.Is(err, errIsDir):
		return "Is a directory"
	case errors.Is(err, errNotDir):
		return "Directory nonexistent"
	}
	return err.Error()
}

func openReason(err error) string {
	if errors.Is(err, errNotExist) || errors.Is(err, errNotDir) {
		return "No such file"
	}
	return err.Error()
}
