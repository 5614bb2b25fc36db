package zfsssh

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// wordParts lexes src, which must be one word, into its parts.
func wordParts(t *testing.T, src string) []wordPart {
	t.Helper()
	toks := lex(src)
	if len(toks) != 2 || toks[0].kind != tWord || toks[1].kind != tEOF {
		t.Fatalf("%q: not one word: %+v", src, toks)
	}
	return toks[0].word.parts
}

func TestWordParts(t *testing.T) {
	u := func(s string) wordPart { return wordPart{text: s} }
	q := func(s string) wordPart { return wordPart{text: s, quoted: true} }
	p := func(name string, quoted bool) wordPart { return wordPart{param: name, quoted: quoted} }
	cases := []struct {
		src  string
		want []wordPart
	}{
		{`abc`, []wordPart{u("abc")}},
		{`'a b'`, []wordPart{q("a b")}},
		{`a'b'c`, []wordPart{u("a"), q("b"), u("c")}},
		{`'a''b'"c"`, []wordPart{q("abc")}},
		{`''`, []wordPart{q("")}},
		{`'a'''`, []wordPart{q("a"), q("")}},
		{`a\bc`, []wordPart{u("a"), q("b"), u("c")}},
		// two joined parts in one word: the second must not overwrite
		// the first (the buffer they are built in is reused)
		{`\a\bx\c\d`, []wordPart{q("ab"), u("x"), q("cd")}},
		{`"x$y"z`, []wordPart{q("x"), p("y", true), u("z")}},
		{`"a\$\"\\\x"`, []wordPart{q(`a$"\\x`)}},
		{`a$`, []wordPart{u("a"), u("$")}},
		{`$1$?${HOME}x`, []wordPart{p("1", false), p("?", false), p("HOME", false), u("x")}},
		{`a\`, []wordPart{u(`a\`)}},
	}
	for _, c := range cases {
		if got := wordParts(t, c.src); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.src, got, c.want)
		}
	}
}

// refParts is the word rule one character at a time: literal text joins
// the part being built while its quotedness stays the same; an expansion
// ends it; an empty quoted string is an empty quoted part of its own.
// It checks the lexer, which takes runs of characters and slices of its
// source instead.
func refParts(src string) ([]wordPart, bool) {
	var parts []wordPart
	var cur strings.Builder
	curQ := false
	emit := func() {
		if cur.Len() > 0 {
			parts = append(parts, wordPart{text: cur.String(), quoted: curQ})
			cur.Reset()
		}
	}
	put := func(s string, quoted bool) {
		if cur.Len() > 0 && curQ != quoted {
			emit()
		}
		curQ = quoted
		cur.WriteString(s)
	}
	// dollar is the lexer's own (unchanged by the run-taking).
	dollar := func(i int, quoted bool) (int, bool) {
		lx := &lexer{src: src, pos: i}
		part, err := lx.dollar(quoted)
		if err != nil {
			return 0, false
		}
		if part.param == "" {
			put(part.text, quoted)
		} else {
			emit()
			parts = append(parts, part)
		}
		return lx.pos, true
	}
	for i := 0; i < len(src); {
		switch c := src[i]; c {
		case '\'':
			end := strings.IndexByte(src[i+1:], '\'')
			if end < 0 {
				return nil, false
			}
			if end == 0 {
				put("", true)
				emit()
				parts = append(parts, wordPart{quoted: true})
			}
			for _, b := range []byte(src[i+1 : i+1+end]) {
				put(string(b), true)
			}
			i += end + 2
		case '\\':
			if i+1 == len(src) {
				put(`\`, false)
				i++
				continue
			}
			put(src[i+1:i+2], true)
			i += 2
		case '$':
			emit()
			var ok bool
			if i, ok = dollar(i, false); !ok {
				return nil, false
			}
		case '"':
			i++
			empty := true
			for {
				if i == len(src) {
					return nil, false
				}
				d := src[i]
				if d == '"' {
					i++
					break
				}
				switch {
				case d == '\\' && i+1 < len(src) && strings.IndexByte("$`\"\\", src[i+1]) >= 0:
					put(src[i+1:i+2], true)
					i += 2
				case d == '$':
					var ok bool
					if i, ok = dollar(i, true); !ok {
						return nil, false
					}
				default:
					put(string(d), true)
					i++
				}
				empty = false
			}
			if empty {
				emit()
				parts = append(parts, wordPart{quoted: true})
			}
		default:
			put(string(c), false)
			i++
		}
	}
	emit()
	return parts, true
}

// TestWordPartsMatchTheCharacterRule: random words over the characters
// that matter lex to the parts the one-character-at-a-time rule makes.
func TestWordPartsMatchTheCharacterRule(t *testing.T) {
	const alphabet = `ab1?'"\${}x`
	rng := rand.New(rand.NewSource(16))
	n := 0
	for i := 0; i < 100000; i++ {
		b := make([]byte, 1+rng.Intn(14))
		for j := range b {
			b[j] = alphabet[rng.Intn(len(alphabet))]
		}
		src := string(b)
		want, ok := refParts(src)
		toks := lex(src)
		if !ok {
			if toks[len(toks)-1].kind != tErr {
				t.Fatalf("%q: lexed without an error: %+v", src, toks)
			}
			continue
		}
		n++
		if got := wordParts(t, src); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %+v, want %+v", src, got, want)
		}
	}
	if n < 10000 {
		t.Fatalf("only %d of the random words lexed", n)
	}
}
