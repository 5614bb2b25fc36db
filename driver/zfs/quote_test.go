package zfs

import (
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// TestQuoteReachesProgramAsOneArgument runs every tricky value through a
// real /bin/sh and checks the program received exactly that byte string as
// one argument: nothing was expanded, split or executed.
func TestQuoteReachesProgramAsOneArgument(t *testing.T) {
	values := []string{
		"plain", "", "with space", "it's", `"double"`, "semi;colon", "$(touch /tmp/pwned)",
		"`id`", "new\nline", "tab\there", `back\slash`, "$HOME", "a&&b", "a|b", "*", "~root",
		"-leading-dash", "x=y", "'", "''", "\\'", "ünïcödé", "a\x01b",
	}
	for _, v := range values {
		line := "printf '%s\\0' " + Quote(v)
		out, err := exec.Command("/bin/sh", "-c", line).Output()
		if err != nil {
			t.Fatalf("sh -c %q: %v", line, err)
		}
		got := strings.TrimSuffix(string(out), "\x00")
		if got != v || strings.Count(string(out), "\x00") != 1 {
			t.Errorf("Quote(%q) = %s: the shell passed %q", v, Quote(v), out)
		}
	}
}

func TestLineQuotesEveryWord(t *testing.T) {
	got := Line("/sbin/zfs", "set", "org.freenas:description=a b;c", "tank/v")
	want := `/sbin/zfs set 'org.freenas:description=a b;c' tank/v`
	if got != want {
		t.Fatalf("Line = %s, want %s", got, want)
	}
}

// TestSafeByteTable checks the lookup table byte by byte against the rule
// it encodes: letters, digits and -_./:@%+,= stay unquoted, nothing else.
func TestSafeByteTable(t *testing.T) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		want := b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("-_./:@%+,=", b) >= 0
		if got := isSafeWord(string([]byte{b})); got != want {
			t.Errorf("isSafeWord(%q) = %v, want %v", b, got, want)
		}
	}
	if isSafeWord("tank/a b") || !isSafeWord("tank/pvc-1_a.b:c@d%e+f,g=h") {
		t.Error("isSafeWord judged a whole word wrongly")
	}
}

// TestLineAsWordByWord checks the one-buffer Line against quoting each word
// on its own and joining them (the rule it replaced), on random words.
func TestLineAsWordByWord(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("az09-_./:@%+,= '\"\\$`;\n\t\x00\xff")
	for range 20000 {
		argv := make([]string, rng.IntN(5))
		for i := range argv {
			w := make([]byte, rng.IntN(8))
			for j := range w {
				w[j] = alphabet[rng.IntN(len(alphabet))]
			}
			argv[i] = string(w)
		}
		want := make([]string, len(argv))
		for i, a := range argv {
			switch {
			case a == "":
				want[i] = "''"
			case isSafeWord(a):
				want[i] = a
			default:
				want[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
			}
			if got := Quote(a); got != want[i] {
				t.Fatalf("Quote(%q) = %q, want %q", a, got, want[i])
			}
		}
		if got := Line(argv...); got != strings.Join(want, " ") {
			t.Fatalf("Line(%q) = %q, want %q", argv, got, strings.Join(want, " "))
		}
	}
}
