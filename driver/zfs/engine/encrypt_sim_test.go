package engine_test

// Per-volume encryption end to end: the engine drives the simulated ZFS
// host over SSH, and the host's model speaks OpenZFS's encryption (keys on
// stdin, encryption roots, load-key with libzfs's errors). Every test also
// captures the engine's and the host's logs (debug level) and checks that
// the key is in none of them, in no error and in no property.

import (
	"bytes"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

const (
	encPass = "correct horse battery staple"
	encHex  = "f00dfeedf00dfeedf00dfeedf00dfeedf00dfeedf00dfeedf00dfeedf00dfeed"
	encRaw  = "32-bytes-of-raw-key-material-!!!"
)

// syncBuffer is a log sink shared by the engine's and the host's loggers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// encSim is an engine over a simulated host whose logs are kept.
type encSim struct {
	*simEngine
	logs  *syncBuffer
	state string // the host's state directory
}

// newEncSim is newSimEngine with both sides logging at debug level into
// one buffer.
func newEncSim(t *testing.T, driver string) *encSim {
	t.Helper()
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	state := t.TempDir()
	h, err := zfshost.Start(zfshost.Options{Dir: state, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	s := newSimEngineLogging(t, h, driver, "enc", nil, logger)
	return &encSim{simEngine: s, logs: logs, state: state}
}

func (s *encSim) create(name string, secrets, params map[string]string, src *csi.VolumeContentSource) (*csi.Volume, error) {
	resp, err := s.CreateVolume(ctx, &csi.CreateVolumeRequest{
		Name:                name,
		CapacityRange:       &csi.CapacityRange{RequiredBytes: mib},
		VolumeCapabilities:  []*csi.VolumeCapability{capability(sngw, s.block, "")},
		Parameters:          params,
		Secrets:             secrets,
		VolumeContentSource: src,
	})
	return resp.GetVolume(), err
}

// encProps is the encryption state of a dataset as zfs get shows it.
func encProps(t *testing.T, h *zfshost.Host, ds string) string {
	t.Helper()
	return strings.Join(zfsLines(t, h, "get", "-H", "-o", "value", "encryption,keyformat,keylocation,encryptionroot,keystatus", ds), " ")
}

// noKeyAnywhere checks that no key is in the logs, in the properties of any
// dataset or in a file of the host's state.
func (s *encSim) noKeyAnywhere(t *testing.T, keys ...string) {
	t.Helper()
	logs := s.logs.String()
	if !strings.Contains(logs, "zfs") {
		t.Fatalf("the logs captured no zfs command; the check would prove nothing:\n%s", logs)
	}
	props := strings.Join(zfsLines(t, s.host, "get", "-H", "-r", "-t", "all", "all", s.host.Pool), "\n")
	for _, k := range keys {
		if strings.Contains(logs, k) {
			t.Errorf("the key %q is in the logs", k)
		}
		if strings.Contains(props, k) {
			t.Errorf("the key %q is in a property", k)
		}
	}
	_ = filepath.WalkDir(s.state, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.Contains(p, string(filepath.Separator)+"meta") && filepath.Base(p) != "journal" {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, k := range keys {
			if bytes.Contains(b, []byte(k)) {
				t.Errorf("the key %q is stored in %s", k, p)
			}
		}
		return nil
	})
}

// TestSimEncryptedVolume: CreateVolume with the provisioner secret makes an
// encrypted dataset whose key is loaded, in each key format; a repeated
// call answers the same volume.
func TestSimEncryptedVolume(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.driver, func(t *testing.T) {
			s := newEncSim(t, d.driver)
			params := map[string]string{engine.ParamEncryption: "true"}
			for _, c := range []struct {
				name, key, format, want string
			}{
				{"pvc-pass", encPass, "", "aes-256-gcm passphrase prompt %s available"},
				{"pvc-hex", encHex, "hex", "aes-256-gcm hex prompt %s available"},
				{"pvc-raw", encRaw, "raw", "aes-128-gcm raw prompt %s available"},
			} {
				secrets := map[string]string{engine.SecretEncryptionKey: c.key}
				if c.format != "" {
					secrets[engine.SecretEncryptionKeyFormat] = c.format
				}
				if c.format == "raw" {
					secrets[engine.SecretEncryptionAlgorithm] = "aes-128-gcm"
				}
				v, err := s.create(c.name, secrets, params, nil)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				ds := s.parent + "/" + v.GetVolumeId()
				if got, want := encProps(t, s.host, ds), strings.Replace(c.want, "%s", ds, 1); got != want {
					t.Errorf("%s: %q, want %q", c.name, got, want)
				}
				if got := zfsGet(t, s.host, "democratic-csi:provision_success", ds); got != "true" {
					t.Errorf("%s not marked provisioned: %q", c.name, got)
				}
				again, err := s.create(c.name, secrets, params, nil)
				if err != nil || again.GetVolumeId() != v.GetVolumeId() {
					t.Errorf("%s again: %v %v", c.name, again, err)
				}
			}
			if !d.block {
				if got := zfsGet(t, s.host, "mounted", s.parent+"/pvc-pass"); got != "yes" {
					t.Errorf("encrypted filesystem not mounted: %q", got)
				}
			} else if _, ok := s.host.Model.ZvolPath(s.parent + "/pvc-pass"); !ok {
				t.Error("encrypted zvol has no device")
			}
			s.noKeyAnywhere(t, encPass, encHex, encRaw)
		})
	}
}

// TestSimEncryptedSnapshotsAndClones: snapshots of an encrypted volume,
// volumes restored from them and clones of the volume share its encryption
// root and key.
func TestSimEncryptedSnapshotsAndClones(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.driver, func(t *testing.T) {
			s := newEncSim(t, d.driver)
			secrets := map[string]string{engine.SecretEncryptionKey: encPass}
			params := map[string]string{engine.ParamEncryption: "true"}
			if _, err := s.create("pvc-src", secrets, params, nil); err != nil {
				t.Fatal(err)
			}
			src := s.parent + "/pvc-src"
			snap, err := s.snapshot("snap-1", "pvc-src", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := encProps(t, s.host, s.parent+"/"+snap.GetSnapshotId()); got != "aes-256-gcm - - "+src+" available" {
				t.Errorf("snapshot: %q", got)
			}
			for _, c := range []struct {
				name string
				src  *csi.VolumeContentSource
			}{
				{"pvc-restored", snapshotSource(snap.GetSnapshotId())},
				{"pvc-clone", volumeSource("pvc-src")},
			} {
				v, err := s.create(c.name, secrets, params, c.src)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				ds := s.parent + "/" + v.GetVolumeId()
				if got := encProps(t, s.host, ds); got != "aes-256-gcm passphrase none "+src+" available" {
					t.Errorf("%s: %q", c.name, got)
				}
			}
			s.noKeyAnywhere(t, encPass)
		})
	}
}

// TestSimEncryptionKeyLoad: a key the host lost (a reboot, a pool import)
// is loaded before the volume is used; a wrong key is FAILED_PRECONDITION
// naming the dataset, not the key, and leaves the key unloaded.
func TestSimEncryptionKeyLoad(t *testing.T) {
	s := newEncSim(t, "zfs-generic-nfs")
	secrets := map[string]string{engine.SecretEncryptionKey: encPass}
	if _, err := s.create("pvc-a", secrets, map[string]string{engine.ParamEncryption: "true"}, nil); err != nil {
		t.Fatal(err)
	}
	ds := s.parent + "/pvc-a"
	zfsLines(t, s.host, "unload-key", ds)
	if got := zfsGet(t, s.host, "keystatus", ds) + " " + zfsGet(t, s.host, "mounted", ds); got != "unavailable no" {
		t.Fatalf("after unload-key: %q", got)
	}
	const wrong = "wrong horse battery staple"
	bad, err := engine.ParseEncryption(nil, map[string]string{engine.SecretEncryptionKey: wrong})
	if err != nil {
		t.Fatal(err)
	}
	err = s.EnsureKeyLoaded(ctx, ds, bad)
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), ds) || !strings.Contains(err.Error(), "Incorrect key") {
		t.Errorf("wrong key: %v, want FAILED_PRECONDITION naming %s and zfs's reason", err, ds)
	}
	if err != nil && strings.Contains(err.Error(), wrong) {
		t.Errorf("the key is in the error: %v", err)
	}
	if got := zfsGet(t, s.host, "keystatus", ds); got != "unavailable" {
		t.Errorf("keystatus after a wrong key: %q", got)
	}
	err = s.EnsureKeyLoaded(ctx, ds, nil)
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), engine.SecretEncryptionKey) {
		t.Errorf("no key: %v, want FAILED_PRECONDITION naming %s", err, engine.SecretEncryptionKey)
	}
	good, err := engine.ParseEncryption(nil, secrets)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureKeyLoaded(ctx, ds, good); err != nil {
		t.Fatalf("right key: %v", err)
	}
	if got := zfsGet(t, s.host, "keystatus", ds) + " " + zfsGet(t, s.host, "mounted", ds); got != "available yes" {
		t.Errorf("after EnsureKeyLoaded: %q", got)
	}
	if err := s.EnsureKeyLoaded(ctx, ds, good); err != nil {
		t.Errorf("EnsureKeyLoaded of a loaded key: %v", err)
	}
	s.noKeyAnywhere(t, encPass, wrong)
}

// TestSimEncryptionBadSecrets: a secret without a key, with a key zfs would
// refuse or with a format or suite zfs does not know is INVALID_ARGUMENT
// before anything is made; the error never shows the key.
func TestSimEncryptionBadSecrets(t *testing.T) {
	s := newEncSim(t, "zfs-generic-nfs")
	params := map[string]string{engine.ParamEncryption: "true"}
	for _, c := range []struct {
		what    string
		secrets map[string]string
		params  map[string]string
		key     string
	}{
		{"no secret", nil, params, ""},
		{"format without key", map[string]string{engine.SecretEncryptionKeyFormat: "hex"}, nil, ""},
		{"short passphrase", map[string]string{engine.SecretEncryptionKey: "seven77"}, params, "seven77"},
		{"two-line passphrase", map[string]string{engine.SecretEncryptionKey: "line one\nline two"}, params, "line one"},
		{"hex too short", map[string]string{engine.SecretEncryptionKey: encHex[:62], engine.SecretEncryptionKeyFormat: "hex"}, params, encHex[:62]},
		{"hex not hex", map[string]string{engine.SecretEncryptionKey: "zz" + encHex[2:], engine.SecretEncryptionKeyFormat: "hex"}, params, "zz" + encHex[2:]},
		{"raw too long", map[string]string{engine.SecretEncryptionKey: encRaw + "!", engine.SecretEncryptionKeyFormat: "raw"}, params, encRaw + "!"},
		{"unknown format", map[string]string{engine.SecretEncryptionKey: encPass, engine.SecretEncryptionKeyFormat: "pem"}, params, encPass},
		{"unknown suite", map[string]string{engine.SecretEncryptionKey: encPass, engine.SecretEncryptionAlgorithm: "rot13"}, params, encPass},
	} {
		_, err := s.create("pvc-bad", c.secrets, c.params, nil)
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", c.what, err)
		}
		if c.key != "" && err != nil && strings.Contains(err.Error(), c.key) {
			t.Errorf("%s: the key is in the error: %v", c.what, err)
		}
	}
	if left := zfsLines(t, s.host, "list", "-H", "-o", "name", "-r", s.parent); len(left) > 1 {
		t.Errorf("datasets made by refused requests: %v", left)
	}
}

// TestSimEncryptionDetachedCopies: a detached copy is a plain zfs send,
// which OpenZFS sends decrypted (the simulator too: the copy would land
// unencrypted), so an encrypted class refuses detached volumes before
// anything is made, any class refuses a detached copy of an encrypted
// source, and RefuseDecryptingCopy names an encrypted source.
func TestSimEncryptionDetachedCopies(t *testing.T) {
	s := newEncSim(t, "zfs-generic-nfs")
	secrets := map[string]string{engine.SecretEncryptionKey: encPass}
	if _, err := s.create("pvc-src", secrets, map[string]string{engine.ParamEncryption: "true"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.create("pvc-plain", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"detachedVolumesFromVolumes", "detachedVolumesFromSnapshots"} {
		_, err := s.create("pvc-copy", secrets, map[string]string{engine.ParamEncryption: "true", p: "true"}, volumeSource("pvc-src"))
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), p) {
			t.Errorf("%s with encryption: %v, want INVALID_ARGUMENT naming it", p, err)
		}
	}
	// A class without encryption may still name an encrypted volume of
	// another class: its detached copy is refused too, as is a detached
	// snapshot of it, before anything (not even a temporary snapshot) is made.
	for _, p := range []string{"detachedVolumesFromVolumes", "detachedVolumesFromSnapshots"} {
		src := volumeSource("pvc-src")
		if p == "detachedVolumesFromSnapshots" {
			snap, err := s.snapshot("snap-src", "pvc-src", nil)
			if err != nil {
				t.Fatal(err)
			}
			src = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: snap.GetSnapshotId()}}}
		}
		_, err := s.create("pvc-copy", nil, map[string]string{p: "true"}, src)
		if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), s.parent+"/pvc-src") {
			t.Errorf("%s from an encrypted source in a plain class: %v, want FAILED_PRECONDITION naming the source", p, err)
		}
	}
	if _, err := s.snapshot("snap-d", "pvc-src", map[string]string{"detachedSnapshots": "true"}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("detached snapshot of an encrypted volume: %v, want FAILED_PRECONDITION", err)
	}
	if got := zfsLines(t, s.host, "list", "-H", "-o", "name", "-r", s.parent); len(got) != 3 {
		t.Errorf("datasets after the refused copies: %v", got)
	}
	if got := zfsLines(t, s.host, "list", "-H", "-o", "name", "-t", "snapshot", "-r", s.parent); len(got) != 1 || !strings.HasSuffix(got[0], "@snap-src") {
		t.Errorf("snapshots after the refused copies: %v, want only snap-src", got)
	}
	if got := zfsLines(t, s.host, "list", "-H", "-o", "name", "-r", s.detach); len(got) > 1 {
		t.Errorf("detached snapshots after the refusal: %v", got)
	}
	err := s.RefuseDecryptingCopy(ctx, s.parent+"/pvc-src")
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), s.parent+"/pvc-src") {
		t.Errorf("encrypted source: %v, want FAILED_PRECONDITION naming it", err)
	}
	if err := s.RefuseDecryptingCopy(ctx, s.parent+"/pvc-plain"); err != nil {
		t.Errorf("unencrypted source: %v", err)
	}
	s.noKeyAnywhere(t, encPass)
}

// TestSimEncryptedRawCopy: CopyKeepingEncryption copies an encrypted
// snapshot with a raw stream: the copy is encrypted, its own encryption
// root with the source's key (a wrong key does not load it, the right one
// does); an unencrypted source is copied as before.
func TestSimEncryptedRawCopy(t *testing.T) {
	s := newEncSim(t, "zfs-generic-nfs")
	secrets := map[string]string{engine.SecretEncryptionKey: encPass}
	if _, err := s.create("pvc-src", secrets, map[string]string{engine.ParamEncryption: "true"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.create("pvc-plain", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	src, plain := s.parent+"/pvc-src", s.parent+"/pvc-plain"
	zfsLines(t, s.host, "snapshot", src+"@copy", plain+"@copy")
	zfsLines(t, s.host, "unload-key", src) // a raw send needs no key

	cp := s.parent + "/pvc-copy"
	if err := s.CopyKeepingEncryption(ctx, src+"@copy", cp); err != nil {
		t.Fatal(err)
	}
	if got := encProps(t, s.host, cp); got != "aes-256-gcm passphrase prompt "+cp+" unavailable" {
		t.Errorf("raw copy: %q", got)
	}
	const wrong = "wrong horse battery staple"
	bad, _ := engine.ParseEncryption(nil, map[string]string{engine.SecretEncryptionKey: wrong})
	if err := s.EnsureKeyLoaded(ctx, cp, bad); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("the copy opened with a wrong key: %v", err)
	}
	good, _ := engine.ParseEncryption(nil, secrets)
	if err := s.EnsureKeyLoaded(ctx, cp, good); err != nil {
		t.Fatalf("the copy with the source's key: %v", err)
	}
	if got := zfsGet(t, s.host, "keystatus", cp) + " " + zfsGet(t, s.host, "mounted", cp); got != "available yes" {
		t.Errorf("copy after its key: %q", got)
	}

	if err := s.CopyKeepingEncryption(ctx, plain+"@copy", s.parent+"/pvc-plain-copy"); err != nil {
		t.Fatal(err)
	}
	if got := zfsGet(t, s.host, "encryption", s.parent+"/pvc-plain-copy"); got != "off" {
		t.Errorf("copy of an unencrypted source: %q", got)
	}
	if !strings.Contains(s.logs.String(), "send -w "+src+"@copy") {
		t.Error("no raw send in the logs")
	}
	s.noKeyAnywhere(t, encPass, wrong)
}
