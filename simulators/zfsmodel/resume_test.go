package zfsmodel

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// A receive -s whose stream breaks off keeps a partial dataset with a
// token; a fresh stream into it is refused; send -t sends the rest and
// receive -s completes it with every byte; receive -A discards one.
func TestResumableReceive(t *testing.T) {
	for _, kind := range []string{"filesystem", "volume"} {
		t.Run(kind, func(t *testing.T) {
			m, _ := newModel(t, 1<<30)
			data := strings.Repeat("resumable bytes ", 300000) // ~4.6 MiB: several records
			if kind == "filesystem" {
				must(t, m, "zfs create tank/src")
				writeFile(t, m, "/tank/src/big.txt", data)
			} else {
				must(t, m, "zfs create -V 8M tank/src")
				p, _ := m.ZvolPath("tank/src")
				if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(p, 8<<20); err != nil {
					t.Fatal(err)
				}
			}
			must(t, m, "zfs snapshot tank/src@s1")
			full := send(t, m, "tank/src@s1")

			cut := full[:len(full)/2]
			r := recv(m, cut, "-s", "tank/dst")
			if r.code != 1 || !strings.Contains(r.stderr, "Partially received snapshot is saved.") || !strings.Contains(r.stderr, "zfs send -t 1-") {
				t.Fatalf("interrupted receive -s: exit %d, %q", r.code, r.stderr)
			}
			token := strings.TrimSpace(must(t, m, "zfs get -H -o value receive_resume_token tank/dst"))
			if !strings.HasPrefix(token, "1-") || !strings.Contains(r.stderr, token) {
				t.Fatalf("token %q; stderr %q", token, r.stderr)
			}
			if r := recv(m, full, "tank/dst"); r.code == 0 || !strings.Contains(r.stderr, `contains partially-complete state from "zfs receive -s".`) {
				t.Fatalf("a fresh stream into a partial dataset: exit %d, %q", r.code, r.stderr)
			}
			if r := sh(m, "zfs send -t 1-00-00-zz"); r.code == 0 || !strings.Contains(r.stderr, "cannot resume send: resume token is corrupt") {
				t.Fatalf("bad token: exit %d, %q", r.code, r.stderr)
			}

			rest := send(t, m, "-t", token)
			if len(rest) >= len(full) {
				t.Fatalf("the resumed stream is %d bytes; the full one %d: nothing was skipped", len(rest), len(full))
			}
			if r := recv(m, rest, "-s", "tank/dst"); r.code != 0 {
				t.Fatalf("resumed receive: exit %d, %q", r.code, r.stderr)
			}
			if tok := strings.TrimSpace(must(t, m, "zfs get -H -o value receive_resume_token tank/dst")); tok != "-" {
				t.Fatalf("token after completion %q; want -", tok)
			}
			var got []byte
			if kind == "filesystem" {
				p, _ := m.HostPath("/tank/dst/big.txt")
				got, _ = os.ReadFile(p)
			} else {
				p, _ := m.ZvolPath("tank/dst")
				b, _ := os.ReadFile(p)
				got = b[:min(len(b), len(data))]
			}
			if string(got) != data {
				t.Fatalf("received %d bytes; want the %d sent", len(got), len(data))
			}
			must(t, m, "zfs list -t snapshot tank/dst@s1")

			// Broken off before the first whole record: the token's offset
			// is 0 and resuming still works.
			if r := recv(m, full[:firstData(full)+100], "-s", "tank/early"); r.code != 1 {
				t.Fatalf("early interruption: %d %q", r.code, r.stderr)
			}
			early := strings.TrimSpace(must(t, m, "zfs get -H -o value receive_resume_token tank/early"))
			if r := recv(m, send(t, m, "-t", early), "-s", "tank/early"); r.code != 0 {
				t.Fatalf("resume from offset 0: %d %q", r.code, r.stderr)
			}

			// Abort: the partial dataset goes; -A on nothing says so.
			if r := recv(m, cut, "-s", "tank/gone"); r.code != 1 {
				t.Fatalf("second interrupted receive: %d %q", r.code, r.stderr)
			}
			must(t, m, "zfs receive -A tank/gone")
			if r := sh(m, "zfs list tank/gone"); r.code == 0 {
				t.Fatal("tank/gone survived receive -A")
			}
			if r := sh(m, "zfs receive -A tank/dst"); r.code != 1 || !strings.Contains(r.stderr, "'tank/dst' does not have any resumable receive state to abort") {
				t.Fatalf("receive -A without state: %d %q", r.code, r.stderr)
			}
			// Without -s nothing is kept.
			if r := recv(m, cut, "tank/plain"); r.code != 1 || sh(m, "zfs list tank/plain").code == 0 {
				t.Fatalf("receive without -s kept state: %d %q", r.code, r.stderr)
			}
		})
	}
}

// firstData is where a stream's first data record starts.
func firstData(stream string) int {
	off := preambleLen
	for off+5 <= len(stream) && stream[off] != 'D' {
		off += 5 + int(binary.BigEndian.Uint32([]byte(stream[off+1:off+5])))
	}
	return off
}

// The partial state survives a restart of the host (the model reopened on
// its state directory): the token is the same and resuming completes.
func TestResumableReceiveSurvivesReopen(t *testing.T) {
	m, dir := newModel(t, 1<<30)
	must(t, m, "zfs create tank/src")
	data := strings.Repeat("kept across a restart ", 200000)
	writeFile(t, m, "/tank/src/f", data)
	must(t, m, "zfs snapshot tank/src@s1")
	full := send(t, m, "tank/src@s1")
	if r := recv(m, full[:len(full)*2/3], "-s", "tank/dst"); r.code != 1 {
		t.Fatalf("interrupted receive: %d %q", r.code, r.stderr)
	}
	token := strings.TrimSpace(must(t, m, "zfs get -H -o value receive_resume_token tank/dst"))
	m.Close()
	m2, err := Open(Options{StateDir: dir, RescanInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m2.Close() })
	if got := strings.TrimSpace(must(t, m2, "zfs get -H -o value receive_resume_token tank/dst")); got != token {
		t.Fatalf("token after reopen %q; want %q", got, token)
	}
	if r := recv(m2, send(t, m2, "-t", token), "-s", "tank/dst"); r.code != 0 {
		t.Fatalf("resume after reopen: %d %q", r.code, r.stderr)
	}
	p, _ := m2.HostPath("/tank/dst/f")
	if got, _ := os.ReadFile(p); string(got) != data {
		t.Fatalf("received %d bytes; want %d", len(got), len(data))
	}
}
