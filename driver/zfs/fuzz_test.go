package zfs

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseSize: a size is never negative; plain byte counts read as
// themselves; a parsed size written back in bytes reads the same; a
// number with a suffix is that many units (when it fits); anything else
// is an error, never a panic.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"16384", "16K", "16k", "1.5G", "512B", "1M", "8E", "9E", "1.5E", "7.99E", " 4K ", "B", "-1", "1e3K", "0x10", "InfK", "NaNM", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d: negative", s, n)
		}
		if back, err := ParseSize(strconv.FormatInt(n, 10)); err != nil || back != n {
			t.Fatalf("ParseSize(%q) = %d, but %d reads back as %d, %v", s, n, n, back, err)
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && v != n {
			t.Fatalf("ParseSize(%q) = %d; the plain number is %d", s, n, v)
		}
	})
}

// FuzzParseSizeUnits: n<unit> is n * 1024^k exactly when it fits in int64.
func FuzzParseSizeUnits(f *testing.F) {
	f.Add(uint64(16), uint8(0))
	f.Add(uint64(8), uint8(5))
	f.Add(uint64(1<<63), uint8(1))
	f.Fuzz(func(t *testing.T, n uint64, unit uint8) {
		k := int(unit % 6)
		s := strconv.FormatUint(n, 10) + string("KMGTPE"[k])
		got, err := ParseSize(s)
		mult := uint64(1) << (10 * (k + 1))
		fits := n <= uint64(math.MaxInt64)/mult
		if fits != (err == nil) {
			t.Fatalf("ParseSize(%q) = %d, %v; fits in int64: %v", s, got, err, fits)
		}
		if fits && uint64(got) != n*mult {
			t.Fatalf("ParseSize(%q) = %d; want %d", s, got, n*mult)
		}
	})
}

// FuzzParseGet: `zfs get -Hp` output of any shape gives properties or an
// error; properties written back as output lines read back the same.
func FuzzParseGet(f *testing.F) {
	for _, s := range []string{
		"tank/v\tvolsize\t1073741824\tlocal\ntank/v\tused\t57344\t-\n",
		"tank/v\tdemocratic-csi:csi_share_volume_context\t{\"a\":\"b\\tc\"}\tlocal\r\n",
		"tank/v\tx\ta\tb\tc\tinherited from tank\n", "tank/v\tonly three\tfields\n", "\n\n", "a\tb\t\t\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		props, err := parseGet(out)
		if err != nil {
			return
		}
		var b strings.Builder
		for name, p := range props {
			if strings.ContainsAny(name, "\t\n") || strings.ContainsAny(p.Source, "\t\n") || strings.Contains(p.Value, "\n") {
				t.Fatalf("parseGet(%q) gave a field with a separator: %q %#v", out, name, p)
			}
			fmt.Fprintf(&b, "ds\t%s\t%s\t%s\n", name, p.Value, p.Source)
		}
		back, err := parseGet(b.String())
		if err != nil || len(back) != len(props) {
			t.Fatalf("rewritten output %q: %v (%d of %d)", b.String(), err, len(back), len(props))
		}
		for name, p := range props {
			if back[name] != p {
				t.Fatalf("property %q: %#v read back as %#v", name, p, back[name])
			}
		}
		for name := range props {
			_ = props.Int(name) // never panics
		}
	})
}

// listExec answers every command with stdout.
type listExec struct{ stdout string }

func (e listExec) Run(context.Context, string, RunOptions) (Output, error) {
	return Output{Stdout: e.stdout}, nil
}
func (listExec) Close() error { return nil }

// FuzzList: `zfs list -Hp` output gives one row per non-empty line, each
// with every asked-for column, or an error.
func FuzzList(f *testing.F) {
	f.Add("tank/a\t1024\t-\ntank/b\t2048\tpvc-1\n", uint8(2))
	f.Add("tank/a\n", uint8(0))
	f.Add("tank/a\t1\t2\t3\n\r\n", uint8(1))
	f.Add("", uint8(3))
	f.Fuzz(func(t *testing.T, out string, ncols uint8) {
		props := []string{"volsize", "democratic-csi:csi_volume_name", "used", "refquota"}[:ncols%5]
		c := &CLI{Exec: listExec{out}}
		rows, err := c.List(context.Background(), "tank", ListOptions{Props: props})
		if err != nil {
			return
		}
		lines := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.TrimRight(l, "\r") != "" {
				lines++
			}
		}
		if len(rows) != lines {
			t.Fatalf("%d rows from %d lines of %q", len(rows), lines, out)
		}
		for _, r := range rows {
			if len(r.Props) != len(props) || strings.Contains(r.Name, "\t") {
				t.Fatalf("row %#v does not have the %d columns", r, len(props))
			}
		}
	})
}

// unquote is a POSIX sh reading of a line that holds only words made of
// safe characters, single-quoted strings and \' (what Quote writes):
// anything else is an error, so Quote's output must stay in that subset.
func unquote(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in, started := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case in:
			if c == '\'' {
				in = false
			} else {
				cur.WriteByte(c)
			}
		case c == '\'':
			in, started = true, true
		case c == '\\':
			if i+1 >= len(line) || line[i+1] != '\'' {
				return nil, fmt.Errorf("backslash not before a quote at %d", i)
			}
			cur.WriteByte('\'')
			started = true
			i++
		case c == ' ':
			if started {
				words = append(words, cur.String())
				cur.Reset()
				started = false
			}
		case isSafeWord(string(c)):
			cur.WriteByte(c)
			started = true
		default:
			return nil, fmt.Errorf("unquoted %q at %d: the shell would treat it specially", c, i)
		}
	}
	if in {
		return nil, fmt.Errorf("unterminated quote")
	}
	if started {
		words = append(words, cur.String())
	}
	return words, nil
}

// FuzzQuote: whatever a value holds, Quote makes it exactly one shell
// word that reads back as the value, and Line keeps every argument
// separate.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "tank/a", "it's", "a b", "$(reboot)", "`id`", "a\nb", "'", "''", "\\", "x;rm -rf /", "a=b,c", "\x00\xff"} {
		f.Add(s, "second")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		words, err := unquote(Quote(a))
		if err != nil || len(words) != 1 || words[0] != a {
			t.Fatalf("Quote(%q) = %s reads back as %q, %v", a, Quote(a), words, err)
		}
		argv := []string{"zfs", a, b, ""}
		got, err := unquote(Line(argv...))
		if err != nil || strings.Join(got, "\x00") != strings.Join(argv, "\x00") || len(got) != len(argv) {
			t.Fatalf("Line(%q) = %s reads back as %q, %v", argv, Line(argv...), got, err)
		}
	})
}
