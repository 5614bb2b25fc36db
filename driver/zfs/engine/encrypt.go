package engine

// Native ZFS encryption per volume. The key comes from the StorageClass's
// provisioner secret (CreateVolumeRequest.secrets) and reaches zfs only on
// stdin (keylocation=prompt): it is never on a command line, in a
// property, a log line, an error or a metric. Snapshots and clones of an
// encrypted dataset are encrypted with the same key by zfs itself.
//
// Secret keys:
//   encryptionKey        the key: a passphrase (8-512 bytes), 64 hex
//                        digits, or 32 raw bytes, as keyformat says
//   encryptionKeyFormat  passphrase (default) | hex | raw
//   encryptionAlgorithm  optional: aes-256-gcm (default) or another of
//                        zfs's encryption values
// The StorageClass parameter `encryption: "true"` makes the secret
// mandatory, so a class that promises encryption never makes a clear
// volume because the secret was left out.

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// Secret and parameter keys for encryption.
const (
	SecretEncryptionKey       = "encryptionKey"
	SecretEncryptionKeyFormat = "encryptionKeyFormat"
	SecretEncryptionAlgorithm = "encryptionAlgorithm"
	ParamEncryption           = "encryption"
)

var encryptionAlgorithms = []string{"on", "aes-128-ccm", "aes-192-ccm", "aes-256-ccm", "aes-128-gcm", "aes-192-gcm", "aes-256-gcm"}

// Encryption is a checked key for one volume. Its String never shows the
// key, so printing it by mistake leaks nothing.
type Encryption struct {
	Format    string // passphrase | hex | raw
	Algorithm string
	key       []byte
}

func (e *Encryption) String() string {
	if e == nil {
		return "unencrypted"
	}
	return fmt.Sprintf("encryption=%s keyformat=%s key=<%d bytes, redacted>", e.Algorithm, e.Format, len(e.key))
}

// ParseEncryption reads the encryption request from a CreateVolume's
// parameters and secrets: nil when the volume is not to be encrypted. A
// missing or malformed key is INVALID_ARGUMENT naming the secret key and
// the rule, never the value.
func ParseEncryption(params, secrets map[string]string) (*Encryption, error) {
	want := false
	if v, ok := params[ParamEncryption]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "StorageClass parameter %s must be true or false", ParamEncryption)
		}
		want = b
	}
	key, hasKey := secrets[SecretEncryptionKey]
	if !want && !hasKey {
		// A secret that describes a key but holds none is a mistake, not
		// a wish for an unencrypted volume.
		for _, k := range []string{SecretEncryptionKeyFormat, SecretEncryptionAlgorithm} {
			if secrets[k] != "" {
				return nil, status.Errorf(codes.InvalidArgument, "the provisioner secret sets %s but has no %s: add the key, or remove %s for an unencrypted volume", k, SecretEncryptionKey, k)
			}
		}
		return nil, nil
	}
	// A detached copy is made with zfs send | zfs receive, and a plain zfs
	// send is the decrypted data: the copy would be stored in the clear.
	for _, p := range []string{"detachedVolumesFromSnapshots", "detachedVolumesFromVolumes"} {
		if b, _ := strconv.ParseBool(params[p]); b {
			return nil, status.Errorf(codes.InvalidArgument, "StorageClass parameter %s=true cannot go with encryption: a detached copy is made with zfs send, which sends an encrypted dataset decrypted, so the copy would be unencrypted; remove %s (clones keep the encryption)", p, p)
		}
	}
	if !hasKey || key == "" {
		return nil, status.Errorf(codes.InvalidArgument, "encryption is requested but the provisioner secret has no %s (set csi.storage.k8s.io/provisioner-secret-name/-namespace on the StorageClass and put the key in that secret)", SecretEncryptionKey)
	}
	e := &Encryption{Format: "passphrase", Algorithm: "aes-256-gcm"}
	if f, ok := secrets[SecretEncryptionKeyFormat]; ok && f != "" {
		e.Format = f
	}
	if a, ok := secrets[SecretEncryptionAlgorithm]; ok && a != "" {
		if !slices.Contains(encryptionAlgorithms, a) {
			return nil, status.Errorf(codes.InvalidArgument, "secret %s: %q is not a zfs encryption algorithm (%s)", SecretEncryptionAlgorithm, a, strings.Join(encryptionAlgorithms, ", "))
		}
		e.Algorithm = a
	}
	switch e.Format {
	case "passphrase":
		if n := len(key); n < 8 || n > 512 {
			return nil, status.Errorf(codes.InvalidArgument, "secret %s: a passphrase must be 8 to 512 bytes; this one is %d", SecretEncryptionKey, n)
		}
		if strings.ContainsAny(key, "\n\r") {
			return nil, status.Errorf(codes.InvalidArgument, "secret %s: a passphrase must be one line (zfs reads it up to the first newline)", SecretEncryptionKey)
		}
		e.key = []byte(key)
	case "hex":
		k := strings.TrimSpace(key)
		if _, err := hex.DecodeString(k); err != nil || len(k) != 64 {
			return nil, status.Errorf(codes.InvalidArgument, "secret %s: keyformat hex needs exactly 64 hexadecimal digits (a 32-byte key); this value has %d characters%s", SecretEncryptionKey, len(k), notHex(err))
		}
		e.key = []byte(k)
	case "raw":
		if len(key) != 32 {
			return nil, status.Errorf(codes.InvalidArgument, "secret %s: keyformat raw needs exactly 32 bytes; this value has %d", SecretEncryptionKey, len(key))
		}
		e.key = []byte(key)
	default:
		return nil, status.Errorf(codes.InvalidArgument, "secret %s: %q is not a zfs keyformat (passphrase, hex, raw)", SecretEncryptionKeyFormat, e.Format)
	}
	return e, nil
}

func notHex(err error) string {
	if err != nil {
		return " and not all are hexadecimal digits"
	}
	return ""
}

// createProps are the encryption properties of `zfs create`; the key
// follows on stdin.
func (e *Encryption) createProps() []zfs.Prop {
	return []zfs.Prop{{Name: "encryption", Value: e.Algorithm}, {Name: "keyformat", Value: e.Format}, {Name: "keylocation", Value: "prompt"}}
}

// stdin is what zfs reads for the key: a passphrase or hex key ends with a
// newline, a raw key is exactly its bytes.
func (e *Encryption) stdin() []byte {
	if e.Format == "raw" {
		return slices.Clone(e.key)
	}
	return append(slices.Clone(e.key), '\n')
}

func (e *Encryption) runOptions() zfs.RunOptions {
	return zfs.RunOptions{Stdin: e.stdin(), Sensitive: []string{string(e.key)}}
}

// CreateEncrypted runs `zfs create` with the encryption properties and the
// key on stdin (only the zfs command line can: the TrueNAS API drivers
// refuse encryption). Nothing is made when zfs refuses the key.
func (eng *Engine) CreateEncrypted(ctx context.Context, ds string, o zfs.CreateOptions, enc *Encryption) error {
	cli, ok := eng.zfs.(*zfs.CLI)
	if !ok {
		return status.Errorf(codes.InvalidArgument, "%s: per-volume encryption needs the zfs command line (zfs-generic-* or freenas-* over SSH)", eng.cfg.driver)
	}
	args := []string{"create"}
	if o.Parents {
		args = append(args, "-p")
	}
	if o.Sparse {
		args = append(args, "-s")
	}
	for _, p := range append(enc.createProps(), o.Props...) {
		args = append(args, "-o", p.Name+"="+p.Value)
	}
	if o.Volsize > 0 {
		args = append(args, "-V", strconv.FormatInt(o.Volsize, 10))
	}
	args = append(args, ds)
	if _, err := cli.Do(ctx, "zfs create", cliArgv(cli, args...), enc.runOptions()); err != nil {
		if zfs.IsExists(err) {
			return nil
		}
		return eng.zfsErr(err, "creating encrypted "+ds)
	}
	return nil
}

// EnsureKeyLoaded loads the key of ds's encryption root when zfs has it
// unloaded (after a reboot or pool import), before the volume is shared or
// attached, and mounts a filesystem. A wrong key is FAILED_PRECONDITION
// naming the dataset; an unencrypted dataset needs nothing. A clone's key
// is its origin's: zfs loads keys only on an encryption root, so the root
// is what gets the key.
func (eng *Engine) EnsureKeyLoaded(ctx context.Context, ds string, enc *Encryption) error {
	p, err := eng.zfs.Get(ctx, ds, keyProps...)
	if err != nil {
		return eng.zfsErr(err, "reading the key status of "+ds)
	}
	if !keyUnavailable(p) {
		return nil
	}
	if enc == nil {
		return status.Errorf(codes.FailedPrecondition, "%s is encrypted and the key of its encryption root %s is not loaded; the request carries no %s to load it", ds, encryptionRoot(ds, p), SecretEncryptionKey)
	}
	// CreateVolume shares the volume after this (its share properties
	// are set then), so no zfs share here.
	return eng.loadKey(ctx, ds, encryptionRoot(ds, p), enc, false)
}

// keyProps are what tells whether a dataset's key must be loaded, and where.
var keyProps = []string{"keystatus", "encryptionroot"}

// keyUnavailable: ds is encrypted and zfs has not got its key. keystatus is
// "-" on an unencrypted dataset, available or unavailable otherwise.
func keyUnavailable(p zfs.Properties) bool { return p["keystatus"].Value == "unavailable" }

// encryptionRoot is the dataset whose key opens ds (ds itself when zfs
// does not say).
func encryptionRoot(ds string, p zfs.Properties) string {
	if r := p["encryptionroot"].Value; r != "" && r != "-" {
		return r
	}
	return ds
}

// loadKey runs `zfs load-key` on root with the key on stdin, then mounts
// the filesystem ds and, with share, shares it again through its share
// properties (zfs load-key mounts nothing, and the host's boot-time
// `zfs share -a` passed over the unmounted dataset).
func (eng *Engine) loadKey(ctx context.Context, ds, root string, enc *Encryption, share bool) error {
	cli, ok := eng.zfs.(*zfs.CLI)
	if !ok {
		return status.Errorf(codes.FailedPrecondition, "%s: loading the key of %s needs the zfs command line", eng.cfg.driver, root)
	}
	_, err := cli.Do(ctx, "zfs load-key", cliArgv(cli, "load-key", "-L", "prompt", root), enc.runOptions())
	if err != nil && !strings.Contains(err.Error(), "Key already loaded") {
		what := ds
		if root != ds {
			what = ds + " (encryption root " + root + ")"
		}
		return status.Errorf(codes.FailedPrecondition, "loading the key of %s failed (wrong key in %s?): %v", what, SecretEncryptionKey, err)
	}
	eng.log.Info("loaded the encryption key of a volume", "dataset", ds, "encryption_root", root)
	if eng.cfg.kind != filesystem {
		return nil
	}
	if _, err := cli.Do(ctx, "zfs mount", cliArgv(cli, "mount", ds), zfs.RunOptions{}); err != nil && !strings.Contains(err.Error(), "already mounted") {
		return eng.zfsErr(err, "mounting "+ds)
	}
	if _, ok := eng.share.(PropertySharer); ok && share {
		if _, err := cli.Do(ctx, "zfs share", cliArgv(cli, "share", ds), zfs.RunOptions{}); err != nil && !strings.Contains(err.Error(), "already shared") {
			return eng.zfsErr(err, "sharing "+ds+" again after loading its key")
		}
	}
	return nil
}

// RefuseDecryptingCopy is FAILED_PRECONDITION when ds is encrypted: a
// detached snapshot or volume is copied with a plain zfs send, which sends
// the decrypted data, so the copy would be stored unencrypted (a raw send,
// zfs send -w, would keep it encrypted but needs its key loaded after the
// receive, and a restore from such a copy would need the source's key).
// Detached snapshots and detached volumes call it on their source before
// anything is made, whatever the class of the new volume says: a class
// without encryption may name an encrypted volume of another class.
func (eng *Engine) RefuseDecryptingCopy(ctx context.Context, ds string) error {
	p, err := eng.zfs.Get(ctx, ds, "encryption")
	if zfs.IsNotExist(err) {
		return status.Errorf(codes.NotFound, "source dataset %s does not exist", ds)
	}
	if err != nil {
		return eng.zfsErr(err, "reading the encryption of "+ds)
	}
	if v := p["encryption"].Value; v != "" && v != "off" && v != "-" {
		return status.Errorf(codes.FailedPrecondition, "%s is encrypted (%s): a detached copy is made with zfs send, which would store it unencrypted; take an ordinary snapshot or clone instead (they keep the encryption)", ds, v)
	}
	return nil
}

// CopyKeepingEncryption copies snapshot snap to a new dataset target as a
// detached snapshot or volume does, keeping an encrypted source encrypted:
// its stream is raw (zfs send -w), so target arrives as its own
// encryption root with the source's key, unloaded (EnsureKeyLoaded with
// the source's key loads it). An unencrypted source is copied as
// SendReceive copies it. It is the copy detached snapshots and volumes
// need in place of SendReceive before encryption can go with them.
func (eng *Engine) CopyKeepingEncryption(ctx context.Context, snap, target string) error {
	p, err := eng.zfs.Get(ctx, snap, "encryption")
	if err != nil {
		return eng.zfsErr(err, "reading the encryption of "+snap)
	}
	if v := p["encryption"].Value; v == "" || v == "off" || v == "-" {
		if err := eng.zfs.SendReceive(ctx, snap, target); err != nil {
			return eng.zfsErr(err, "copying "+snap+" to "+target)
		}
		return nil
	}
	cli, ok := eng.zfs.(*zfs.CLI)
	if !ok {
		return status.Errorf(codes.FailedPrecondition, "%s: copying the encrypted %s needs the zfs command line (a raw zfs send)", eng.cfg.driver, snap)
	}
	pipeline := zfs.Line(cliArgv(cli, "send", "-w", snap)...) + " | " + zfs.Line(cliArgv(cli, "receive", target)...)
	if _, err := cli.Do(ctx, "zfs send -w | zfs receive", []string{"sh", "-c", pipeline}, zfs.RunOptions{}); err != nil {
		return eng.zfsErr(err, "copying the encrypted "+snap+" to "+target)
	}
	return nil
}
