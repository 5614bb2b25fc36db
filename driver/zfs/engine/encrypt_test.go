package engine

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// recordingExec answers every command with exit code code (stderr
// stderr) and records the command lines and what went to stdin.
type recordingExec struct {
	mu     sync.Mutex
	lines  []string
	stdins [][]byte
	answer func(line string) zfs.Output
}

func (r *recordingExec) Run(_ context.Context, line string, o zfs.RunOptions) (zfs.Output, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, line)
	r.stdins = append(r.stdins, o.Stdin)
	if r.answer != nil {
		return r.answer(line), nil
	}
	return zfs.Output{}, nil
}
func (r *recordingExec) Close() error { return nil }

type cliPlatform struct {
	*fakePlatform
	cli *zfs.CLI
}

func (p *cliPlatform) Datasets() zfs.Datasets { return p.cli }

func newCLIEngine(t *testing.T, block bool, exec *recordingExec) *Engine {
	t.Helper()
	tree, err := config.Parse([]byte("zfs:\n  datasetParentName: tank/k8s/vols\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := &cliPlatform{fakePlatform: newFakePlatform(), cli: &zfs.CLI{Exec: exec, Sudo: true}}
	e, err := New(Options{Options: backend.Options{File: "test.yaml", Config: tree, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Driver: "zfs-generic-nfs", Block: block, Platform: p})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

const passphrase = "correct horse battery staple"

func TestParseEncryption(t *testing.T) {
	hexKey := strings.Repeat("ab", 32)
	good := []struct {
		params, secrets map[string]string
		format          string
	}{
		{nil, map[string]string{SecretEncryptionKey: passphrase}, "passphrase"},
		{map[string]string{"encryption": "true"}, map[string]string{SecretEncryptionKey: hexKey, SecretEncryptionKeyFormat: "hex"}, "hex"},
		{nil, map[string]string{SecretEncryptionKey: strings.Repeat("k", 32), SecretEncryptionKeyFormat: "raw", SecretEncryptionAlgorithm: "aes-128-gcm"}, "raw"},
	}
	for _, g := range good {
		e, err := ParseEncryption(g.params, g.secrets)
		if err != nil || e == nil || e.Format != g.format {
			t.Errorf("%v: %v %v", g.secrets[SecretEncryptionKeyFormat], e, err)
			continue
		}
		if s := e.String(); strings.Contains(s, g.secrets[SecretEncryptionKey]) || !strings.Contains(s, "redacted") {
			t.Errorf("String() shows the key: %s", s)
		}
	}
	if e, err := ParseEncryption(map[string]string{"encryption": "false"}, nil); e != nil || err != nil {
		t.Errorf("no encryption: %v %v", e, err)
	}
	bad := []struct {
		name            string
		params, secrets map[string]string
		says            string
	}{
		{"class promises encryption, no secret", map[string]string{"encryption": "true"}, nil, SecretEncryptionKey},
		{"format without a key", nil, map[string]string{SecretEncryptionKeyFormat: "hex"}, "has no " + SecretEncryptionKey},
		{"algorithm without a key", nil, map[string]string{SecretEncryptionAlgorithm: "aes-256-gcm"}, "has no " + SecretEncryptionKey},
		{"empty key", map[string]string{"encryption": "true"}, map[string]string{SecretEncryptionKey: ""}, SecretEncryptionKey},
		{"short passphrase", nil, map[string]string{SecretEncryptionKey: "short1"}, "8 to 512"},
		{"two-line passphrase", nil, map[string]string{SecretEncryptionKey: "line one\nline two"}, "one line"},
		{"hex too short", nil, map[string]string{SecretEncryptionKey: "abcd", SecretEncryptionKeyFormat: "hex"}, "64 hexadecimal"},
		{"hex not hex", nil, map[string]string{SecretEncryptionKey: strings.Repeat("zz", 32), SecretEncryptionKeyFormat: "hex"}, "not all are hexadecimal"},
		{"raw wrong length", nil, map[string]string{SecretEncryptionKey: "0123456789", SecretEncryptionKeyFormat: "raw"}, "32 bytes"},
		{"unknown format", nil, map[string]string{SecretEncryptionKey: passphrase, SecretEncryptionKeyFormat: "pem"}, "passphrase, hex, raw"},
		{"unknown algorithm", nil, map[string]string{SecretEncryptionKey: passphrase, SecretEncryptionAlgorithm: "rot13"}, "aes-256-gcm"},
		{"bad parameter", map[string]string{"encryption": "yes please"}, nil, "true or false"},
		{"detached copies from snapshots", map[string]string{"encryption": "true", "detachedVolumesFromSnapshots": "true"}, map[string]string{SecretEncryptionKey: passphrase}, "decrypted"},
		{"detached copies from volumes", map[string]string{"detachedVolumesFromVolumes": "1"}, map[string]string{SecretEncryptionKey: passphrase}, "detachedVolumesFromVolumes"},
	}
	for _, b := range bad {
		_, err := ParseEncryption(b.params, b.secrets)
		msg := status.Convert(err).Message()
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(msg, b.says) {
			t.Errorf("%s: %v, want INVALID_ARGUMENT saying %q", b.name, err, b.says)
		}
		if k := b.secrets[SecretEncryptionKey]; k != "" && strings.Contains(msg, k) {
			t.Errorf("%s: the error quotes the key: %s", b.name, msg)
		}
	}
}

// The key reaches zfs on stdin only: never on the command line.
func TestCreateEncryptedKeyOnStdinOnly(t *testing.T) {
	for _, tc := range []struct {
		format, key, stdin string
	}{
		{"passphrase", passphrase, passphrase + "\n"},
		{"raw", strings.Repeat("r", 32), strings.Repeat("r", 32)},
	} {
		exec := &recordingExec{}
		e := newCLIEngine(t, true, exec)
		enc, err := ParseEncryption(nil, map[string]string{SecretEncryptionKey: tc.key, SecretEncryptionKeyFormat: tc.format})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.CreateEncrypted(context.Background(), "tank/k8s/vols/pvc-1", zfs.CreateOptions{Parents: true, Volsize: 1 << 20,
			Props: []zfs.Prop{{Name: "volblocksize", Value: "16384"}}}, enc); err != nil {
			t.Fatal(err)
		}
		if len(exec.lines) != 1 {
			t.Fatalf("commands %q", exec.lines)
		}
		line := exec.lines[0]
		for _, w := range []string{"/usr/bin/sudo /sbin/zfs create -p", "encryption=aes-256-gcm", "keyformat=" + tc.format, "keylocation=prompt", "-V 1048576", "tank/k8s/vols/pvc-1"} {
			if !strings.Contains(line, w) {
				t.Errorf("%s: command %q lacks %q", tc.format, line, w)
			}
		}
		if strings.Contains(line, tc.key) {
			t.Errorf("%s: the key is on the command line: %q", tc.format, line)
		}
		if string(exec.stdins[0]) != tc.stdin {
			t.Errorf("%s: stdin %q, want %q", tc.format, exec.stdins[0], tc.stdin)
		}
	}
}

// A refused key is a clear error without the key; an unloaded key is
// loaded (and the filesystem mounted) before sharing.
func TestEnsureKeyLoaded(t *testing.T) {
	enc, _ := ParseEncryption(nil, map[string]string{SecretEncryptionKey: passphrase})
	state := "unavailable"
	exec := &recordingExec{answer: func(line string) zfs.Output {
		switch {
		case strings.Contains(line, " get "):
			ks := state
			if ks == "wrong" {
				ks = "unavailable"
			}
			return zfs.Output{Stdout: "tank/k8s/vols/pvc-1\tkeystatus\t" + ks + "\t-\ntank/k8s/vols/pvc-1\tencryption\taes-256-gcm\t-\n"}
		case strings.Contains(line, "load-key") && state == "wrong":
			return zfs.Output{Code: 255, Stderr: "Key load error: Incorrect key provided for 'tank/k8s/vols/pvc-1'."}
		}
		return zfs.Output{}
	}}
	e := newCLIEngine(t, false, exec)
	ctx := context.Background()
	if err := e.EnsureKeyLoaded(ctx, "tank/k8s/vols/pvc-1", enc); err != nil {
		t.Fatal(err)
	}
	var loads, mounts int
	for i, l := range exec.lines {
		if strings.Contains(l, "load-key -L prompt tank/k8s/vols/pvc-1") {
			loads++
			if string(exec.stdins[i]) != passphrase+"\n" {
				t.Errorf("load-key stdin %q", exec.stdins[i])
			}
		}
		if strings.Contains(l, " mount tank/k8s/vols/pvc-1") {
			mounts++
		}
		if strings.Contains(l, passphrase) {
			t.Errorf("key on a command line: %q", l)
		}
	}
	if loads != 1 || mounts != 1 {
		t.Errorf("load-key %d, mount %d; commands %q", loads, mounts, exec.lines)
	}
	// Missing key for an encrypted dataset.
	if err := e.EnsureKeyLoaded(ctx, "tank/k8s/vols/pvc-1", nil); codeOf(err) != codes.FailedPrecondition {
		t.Errorf("no key: %v", err)
	}
	// Loaded already: nothing to do.
	exec.lines = nil
	state = "available"
	if err := e.EnsureKeyLoaded(ctx, "tank/k8s/vols/pvc-1", enc); err != nil || len(exec.lines) != 1 {
		t.Errorf("available key: %v %q", err, exec.lines)
	}
	// A wrong key: FAILED_PRECONDITION naming the dataset, not the key.
	state = "wrong"
	err := e.EnsureKeyLoaded(ctx, "tank/k8s/vols/pvc-1", enc)
	if codeOf(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "tank/k8s/vols/pvc-1") || strings.Contains(err.Error(), passphrase) {
		t.Errorf("wrong key: %v", err)
	}
}

func codeOf(err error) codes.Code { return status.Code(err) }

// TestParseEncryptionDetachedWithoutEncryption: detached copies stay
// allowed for a class that does not ask for encryption.
func TestParseEncryptionDetachedWithoutEncryption(t *testing.T) {
	e, err := ParseEncryption(map[string]string{"detachedVolumesFromSnapshots": "true", "detachedVolumesFromVolumes": "true"}, nil)
	if e != nil || err != nil {
		t.Fatalf("an unencrypted class with detached copies: %v %v", e, err)
	}
}
