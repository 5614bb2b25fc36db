package zfsmodel

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
)

// send returns the stream of a zfs send command.
func send(t *testing.T, m *Model, args ...string) string {
	t.Helper()
	r := run(m, nil, append([]string{"zfs", "send"}, args...)...)
	if r.code != 0 {
		t.Fatalf("zfs send %v: %s", args, r.stderr)
	}
	return r.stdout
}

func recv(m *Model, stream string, args ...string) result {
	return run(m, strings.NewReader(stream), append([]string{"zfs", "receive"}, args...)...)
}

func TestSendReceiveFilesystem(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create tank/src")
	writeFile(t, m, "/tank/src/a.txt", "alpha")
	writeFile(t, m, "/tank/src/dir/b.bin", strings.Repeat("b", 300000))
	host, _ := m.HostPath("/tank/src")
	if err := os.Symlink("a.txt", host+"/link"); err != nil {
		t.Fatal(err)
	}
	must(t, m, "zfs snapshot tank/src@s1")

	s1 := send(t, m, "tank/src@s1")
	if !strings.HasPrefix(s1, streamMagic) {
		t.Fatalf("stream does not start with the magic")
	}
	r := recv(m, s1, "-v", "tank/dst")
	if r.code != 0 || r.stdout != "receiving full stream of tank/src@s1 into tank/dst@s1\n" {
		t.Fatalf("receive: %d %q %q", r.code, r.stdout, r.stderr)
	}
	want := "a.txt=alpha,dir/b.bin=" + strings.Repeat("b", 300000)
	if got := files(t, m, "/tank/dst"); got != want {
		t.Fatalf("received data differs (%d bytes)", len(got))
	}
	dhost, _ := m.HostPath("/tank/dst/link")
	if l, err := os.Readlink(dhost); err != nil || l != "a.txt" {
		t.Errorf("symlink: %q %v", l, err)
	}
	if a, b := getOne(t, m, "guid", "tank/src@s1"), getOne(t, m, "guid", "tank/dst@s1"); a != b {
		t.Errorf("snapshot guid not carried: %s vs %s", a, b)
	}

	// Incremental: only onto the matching snapshot.
	writeFile(t, m, "/tank/src/c.txt", "gamma")
	must(t, m, "zfs snapshot tank/src@s2")
	inc := send(t, m, "-i", "@s1", "tank/src@s2")
	r = recv(m, inc, "tank/dst")
	if r.code != 0 {
		t.Fatalf("incremental: %q", r.stderr)
	}
	if got := files(t, m, "/tank/dst"); !strings.Contains(got, "c.txt=gamma") {
		t.Errorf("incremental data missing: %q", got[:40])
	}
	r = recv(m, inc, "tank/dst")
	if r.code != 1 || r.stderr != "cannot receive incremental stream: most recent snapshot of tank/dst does not\nmatch incremental source\n" {
		t.Errorf("replayed incremental: %d %q", r.code, r.stderr)
	}
	r = recv(m, inc, "tank/none")
	if r.code != 1 || r.stderr != "cannot receive incremental stream: destination 'tank/none' does not exist\n" {
		t.Errorf("incremental to nothing: %d %q", r.code, r.stderr)
	}

	cases := []struct {
		name, stream string
		args         []string
		code         int
		stderr       string
	}{
		{"short garbage", "this is not a zfs stream", []string{"tank/x"}, 1, "cannot receive: failed to read from stream\n"},
		{"not a stream", strings.Repeat("x", 400), []string{"tank/x"}, 1, "cannot receive: invalid stream (bad magic number)\n"},
		{"empty", "", []string{"tank/x"}, 1, "cannot receive: failed to read from stream\n"},
		{"truncated", s1[:len(s1)/2], []string{"tank/x"}, 1, "cannot receive: failed to read from stream\n"},
		{"exists", s1, []string{"tank/dst"}, 1, "cannot receive new filesystem stream: destination 'tank/dst' exists\nmust specify -F to overwrite it\n"},
		{"exists -F with snapshots", s1, []string{"-F", "tank/dst"}, 1, "cannot receive new filesystem stream: destination has snapshots (eg. tank/dst@s1)\nmust destroy them to overwrite it\n"},
		{"no parent", s1, []string{"tank/no/x"}, 1, "cannot open 'tank/no': dataset does not exist\ncannot receive new filesystem stream: unable to restore to destination\n"},
		{"bad -o", s1, []string{"-o", "atime=maybe", "tank/x"}, 1, "cannot receive: 'atime' must be one of 'on | off'\n"},
		{"pool root", s1, []string{"tank"}, 1, "cannot receive new filesystem stream: destination 'tank' exists\nmust specify -F to overwrite it\n"},
		{"snapshot exists", s1, []string{"tank/dst@s2"}, 1, "cannot receive new filesystem stream: destination 'tank/dst' exists\nmust specify -F to overwrite it\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := recv(m, c.stream, c.args...)
			if r.code != c.code || r.stderr != c.stderr {
				t.Errorf("%d %q, want %d %q", r.code, r.stderr, c.code, c.stderr)
			}
		})
	}
	if m.Exists("tank/x") {
		t.Error("a failed receive left a dataset")
	}

	// -F overwrites a dataset without snapshots; @name renames the snapshot.
	must(t, m, "zfs create tank/over")
	writeFile(t, m, "/tank/over/old", "old")
	if r := recv(m, s1, "-F", "tank/over@renamed"); r.code != 0 {
		t.Fatalf("-F: %q", r.stderr)
	}
	if got := files(t, m, "/tank/over"); strings.Contains(got, "old=old") || !m.Exists("tank/over@renamed") {
		t.Errorf("-F receive: %q", got[:20])
	}
}

func TestSendReceiveVolume(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create -V 32M tank/vol")
	zv, _ := m.ZvolPath("tank/vol")
	f, _ := os.OpenFile(zv, os.O_WRONLY, 0)
	f.WriteAt([]byte("head"), 0)
	f.WriteAt(bytes.Repeat([]byte{7}, 3<<20), 20<<20)
	f.Close()
	must(t, m, "zfs snapshot tank/vol@s")
	if r := recv(m, send(t, m, "tank/vol@s"), "tank/copy"); r.code != 0 {
		t.Fatalf("receive: %q", r.stderr)
	}
	a, _ := os.ReadFile(zv)
	cp, ok := m.ZvolPath("tank/copy")
	if !ok {
		t.Fatal("received volume has no zvol")
	}
	b, _ := os.ReadFile(cp)
	if !bytes.Equal(a, b) {
		t.Fatal("volume contents differ")
	}
	if got := fileBytes(cp); got > 4<<20 {
		t.Errorf("received zvol is not sparse: %d bytes allocated", got)
	}
	if got := getNum(t, m, "volsize", "tank/copy"); got != 32<<20 {
		t.Errorf("volsize %d", got)
	}
}

func TestSendReplicate(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create -p -o org:x=1 tank/k8s/vols/a")
	must(t, m, "zfs create -V 4M tank/k8s/vols/v")
	writeFile(t, m, "/tank/k8s/vols/a/f", "data")
	must(t, m, "zfs snapshot -r tank/k8s@one")
	must(t, m, "zfs snapshot -r tank/k8s@two")
	if r := recv(m, send(t, m, "-R", "tank/k8s@two"), "tank/backup"); r.code != 0 {
		t.Fatalf("receive -R: %q", r.stderr)
	}
	want := "tank/backup\ntank/backup@one\ntank/backup@two\ntank/backup/vols\ntank/backup/vols@one\ntank/backup/vols@two\n" +
		"tank/backup/vols/a\ntank/backup/vols/a@one\ntank/backup/vols/a@two\ntank/backup/vols/v\ntank/backup/vols/v@one\ntank/backup/vols/v@two\n"
	if got := must(t, m, "zfs list -H -r -t all -o name tank/backup"); got != want {
		t.Errorf("replicated tree:\n%s", got)
	}
	if got := getOne(t, m, "org:x", "tank/backup/vols/a"); got != "1\treceived" {
		t.Errorf("replicated property: %q", got)
	}
	if got := files(t, m, "/tank/backup/vols/a"); got != "f=data" {
		t.Errorf("replicated data: %q", got)
	}
	// -e keeps the last element of the sent name.
	if r := recv(m, send(t, m, "tank/k8s/vols/a@one"), "-e", "tank/e"); r.code != 0 || !m.Exists("tank/e/a@one") {
		t.Errorf("receive -e: %q", r.stderr)
	}
}

// TestSendPipeReceive streams send into receive concurrently, as
// "zfs send | zfs receive" does over SSH.
func TestSendPipeReceive(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create tank/src")
	writeFile(t, m, "/tank/src/big", strings.Repeat("0123456789", 500000))
	must(t, m, "zfs snapshot tank/src@s")
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	var sendCode int
	wg.Add(1)
	go func() {
		defer wg.Done()
		sendCode = m.ZFS([]string{"send", "tank/src@s"}, nil, pw, io.Discard)
		pw.Close()
	}()
	var errb bytes.Buffer
	code := m.ZFS([]string{"recv", "tank/dst"}, pr, io.Discard, &errb)
	wg.Wait()
	if sendCode != 0 || code != 0 {
		t.Fatalf("send %d, receive %d: %s", sendCode, code, errb.String())
	}
	if got := files(t, m, "/tank/dst"); len(got) != len("big=")+5000000 {
		t.Errorf("piped data: %d bytes", len(got))
	}
}
