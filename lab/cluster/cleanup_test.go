package cluster

import (
	"os"
	"testing"
)

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{`/a/b`: "/a/b", `/a\040b`: "/a b", `/x\134y`: `/x\y`, `/t\011`: "/t\t"} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProcStartTime(t *testing.T) {
	a, err := procStartTime(os.Getpid())
	if err != nil || a == 0 {
		t.Fatalf("procStartTime(self) = %d, %v", a, err)
	}
	if b, _ := procStartTime(os.Getpid()); a != b {
		t.Errorf("start time changed: %d then %d", a, b)
	}
	if _, err := procStartTime(1 << 30); err == nil {
		t.Error("a pid that does not exist has a start time")
	}
	p := proc{pid: os.Getpid(), start: a + 1}
	if p.running() {
		t.Error("a recorded start time that differs (a recycled pid) counts as running")
	}
}
