package fidelity

import (
	"strings"
)

// A step of a script: a zfs command line, a pipe of two, or a file
// written into (or read from) a mounted filesystem. In all strings $P
// stands for the pool's name and $M for its mountpoint.
type step struct {
	args  []string // zfs <args>
	recv  []string // when set: zfs <args> | zfs <recv>
	stdin string   // fed to zfs <args>
	// put writes content to file in the filesystem dataset (not compared);
	// cat compares the file's content on both sides.
	put, cat            bool
	dataset, file, data string
}

// z is the step "zfs <line>". The line is split at spaces; single quotes
// keep a word with spaces (or an empty word) together.
func z(line string) step { return step{args: splitWords(line)} }

// zin is the step "zfs <line>" reading stdin.
func zin(stdin, line string) step { return step{args: splitWords(line), stdin: stdin} }

// pipe is the step "zfs <send> | zfs <recv>".
func pipe(send, recv string) step { return step{args: splitWords(send), recv: splitWords(recv)} }

func put(dataset, file, data string) step {
	return step{put: true, dataset: dataset, file: file, data: data}
}

func cat(dataset, file string) step { return step{cat: true, dataset: dataset, file: file} }

func splitWords(line string) []string {
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
			}
			inWord = false
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// expand substitutes $P and $M in every word.
func expand(words []string, pool, mnt string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = strings.NewReplacer("$P", pool, "$M", mnt).Replace(w)
	}
	return out
}

// String shows the step as a shell line.
func (s step) String() string {
	switch {
	case s.put:
		return "echo > " + s.dataset + ":" + s.file
	case s.cat:
		return "cat " + s.dataset + ":" + s.file
	case s.recv != nil:
		return "zfs " + shellJoin(s.args) + " | zfs " + shellJoin(s.recv)
	}
	return "zfs " + shellJoin(s.args)
}

func shellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t'\"") {
			w = "'" + w + "'"
		}
		q[i] = w
	}
	return strings.Join(q, " ")
}
