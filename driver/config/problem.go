package config

import "strings"

// Problem is one thing wrong with a config file, naming the file and the key
// so a user knows exactly what to fix.
type Problem struct {
	File string // path of the file ("" when not file-backed)
	Key  string // dotted key path ("" for the file as a whole)
	Msg  string
	// Warning marks something that works but deserves a look (an SSH host
	// key trusted on first use): config check prints it and still passes.
	Warning bool
}

func (p Problem) Error() string {
	var b strings.Builder
	if p.Warning {
		b.WriteString("warning: ")
	}
	if p.File != "" {
		b.WriteString(p.File)
		b.WriteString(": ")
	}
	if p.Key != "" {
		b.WriteString(p.Key)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is a list of problems; as an error it reads one per line.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// Err returns ps as an error, or nil when empty.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// InFile returns ps with File set to file where it is empty.
func (ps Problems) InFile(file string) Problems {
	out := make(Problems, len(ps))
	for i, p := range ps {
		if p.File == "" {
			p.File = file
		}
		out[i] = p
	}
	return out
}

// Failures returns the problems that are not warnings.
func (ps Problems) Failures() Problems {
	var out Problems
	for _, p := range ps {
		if !p.Warning {
			out = append(out, p)
		}
	}
	return out
}
