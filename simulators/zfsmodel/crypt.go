package zfsmodel

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
)

// Native encryption, after OpenZFS 2.2 (lib/libzfs/libzfs_crypto.c and
// module/zfs/dsl_crypt.c). What the model keeps, per dataset, in hidden
// record keys (a "\x00" prefix: neither native nor user properties, so no
// zfs get, send -p or listing ever shows them):
//
//   - every encrypted filesystem and volume: its suite and the GUID of its
//     encryption root (a GUID survives renames);
//   - every encryption root: keyformat, pbkdf2iters, a random salt and a
//     check value, HMAC-SHA256(salt, wrapping key). The check verifies a
//     key offered to load-key without the key being kept anywhere; the
//     wrapping key is derived as zfs derives it (raw bytes, decoded hex)
//     except that a passphrase goes through one HMAC-SHA256 instead of
//     PBKDF2-HMAC-SHA1 with pbkdf2iters rounds: the simulator needs a
//     verifier, not a cipher, and 350000 rounds per load-key would slow
//     every test down.
//
// keylocation is an ordinary local property of an encryption root. Loaded
// keys live only in memory (Model.keys): a model opened again starts with
// every key unloaded, as a host does after a reboot or a pool import.
// Snapshots are encrypted as their dataset is; clones and children share
// their origin's or parent's encryption root.
const (
	cryptSuiteKey = "\x00encryption"
	cryptRootKey  = "\x00encryptionroot"
	cryptFmtKey   = "\x00keyformat"
	cryptItersKey = "\x00pbkdf2iters"
	cryptSaltKey  = "\x00pbkdf2salt"
	cryptCheckKey = "\x00keycheck"
)

// Limits of libzfs_crypto.c and sys/fs/zfs.h.
const (
	wrappingKeyLen         = 32
	minPassphraseLen       = 8
	maxPassphraseLen       = 512
	defaultPBKDF2Iters     = 350000
	defaultEncryptionSuite = "aes-256-gcm" // ZIO_CRYPT_ON_VALUE
)

// encrypted says whether d (or a snapshot's dataset) is encrypted.
func encrypted(d *dataset) bool { return d.head().local[cryptSuiteKey] != "" }

// encRoot is the encryption root of an encrypted dataset (nil when d is not
// encrypted or its root is gone, which zfs does not allow).
func (m *Model) encRoot(d *dataset) *dataset {
	h := d.head()
	g, err := strconv.ParseUint(h.local[cryptRootKey], 10, 64)
	if err != nil {
		return nil
	}
	return m.byGUID[g]
}

// keyLoaded says whether d's data is readable: unencrypted, or its
// encryption root's key is loaded.
func (m *Model) keyLoaded(d *dataset) bool {
	if !encrypted(d) {
		return true
	}
	r := m.encRoot(d)
	return r != nil && m.keys[r.guid]
}

// errCrypto is an EZFS_CRYPTOFAILED error: "<context>: <aux>".
func errCrypto(context, aux string) *Error {
	return newErr(KindCrypto, "%s: %s", context, aux)
}

// keyInput is the key material a command got from its key location: read
// before the model is locked, so a client that is slow to send its stdin
// holds up nobody.
type keyInput struct {
	material []byte
	err      error
}

// readKeyMaterial is get_key_material_stream: a passphrase or hex key is
// one line (the newline dropped), a raw key the first 33 bytes (one more
// than a key, so that a long one is seen as too long).
func readKeyMaterial(r io.Reader, format string) ([]byte, error) {
	if r == nil {
		r = strings.NewReader("")
	}
	if format == "raw" {
		buf := make([]byte, wrappingKeyLen+1)
		n, err := io.ReadFull(r, buf)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return nil, err
		}
		return buf[:n], nil
	}
	line, err := bufio.NewReaderSize(r, maxPassphraseLen+2).ReadSlice('\n')
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	return []byte(strings.TrimSuffix(string(line), "\n")), nil
}

// strerror words a file error as strerror(3) does.
func strerror(err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, os.ErrPermission):
		return "Permission denied"
	}
	return err.Error()
}

// validKeylocation is zfs_prop_valid_keylocation: none, prompt or a URI.
func validKeylocation(v string, encrypted bool) bool {
	switch {
	case v == "none":
		return !encrypted
	case v == "prompt":
		return true
	}
	for _, s := range []string{"file:///", "https://", "http://"} {
		if strings.HasPrefix(v, s) && len(v) > len(s) {
			return true
		}
	}
	return false
}

// validateKey is libzfs validate_key: the aux text of a bad key, "" when
// it is good. A passphrase's length is checked only for a new key.
func validateKey(format string, km []byte, newKey bool) string {
	switch format {
	case "raw":
		if len(km) < wrappingKeyLen {
			return "Raw key too short (expected 32)."
		}
		if len(km) > wrappingKeyLen {
			return "Raw key too long (expected 32)."
		}
	case "hex":
		if len(km) < 2*wrappingKeyLen {
			return "Hex key too short (expected 64)."
		}
		if len(km) > 2*wrappingKeyLen {
			return "Hex key too long (expected 64)."
		}
		if _, err := hex.DecodeString(string(km)); err != nil {
			return "Invalid hex character detected."
		}
	case "passphrase":
		if !newKey {
			break
		}
		if len(km) > maxPassphraseLen {
			return "Passphrase too long (max 512)."
		}
		if len(km) < minPassphraseLen {
			return "Passphrase too short (min 8)."
		}
	}
	return ""
}

// wrappingKey derives the 32-byte wrapping key from checked key material.
func wrappingKey(format string, km []byte, salt uint64) []byte {
	switch format {
	case "raw":
		return append([]byte(nil), km...)
	case "hex":
		k, _ := hex.DecodeString(string(km))
		return k
	}
	var s [8]byte
	binary.LittleEndian.PutUint64(s[:], salt)
	h := hmac.New(sha256.New, s[:])
	h.Write(km)
	return h.Sum(nil)
}

// keyCheck is the value stored to verify a wrapping key later.
func keyCheck(wkey []byte, salt uint64) string {
	var s [8]byte
	binary.LittleEndian.PutUint64(s[:], salt)
	h := hmac.New(sha256.New, wkey)
	h.Write([]byte("switchyard zfsmodel key check"))
	h.Write(s[:])
	return hex.EncodeToString(h.Sum(nil))
}

func randomSalt() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// setRootKey makes d an encryption root with key material km (checked).
func setRootKey(d *dataset, format string, iters uint64, km []byte) {
	var salt uint64
	if format == "passphrase" {
		salt = randomSalt()
	} else {
		iters = 0
	}
	d.local[cryptRootKey] = strconv.FormatUint(d.guid, 10)
	d.local[cryptFmtKey] = format
	d.local[cryptItersKey] = strconv.FormatUint(iters, 10)
	d.local[cryptSaltKey] = strconv.FormatUint(salt, 10)
	d.local[cryptCheckKey] = keyCheck(wrappingKey(format, km, salt), salt)
}

// keyMatches says whether key material km opens encryption root r.
func keyMatches(r *dataset, km []byte) bool {
	salt, _ := strconv.ParseUint(r.local[cryptSaltKey], 10, 64)
	got := keyCheck(wrappingKey(r.local[cryptFmtKey], km, salt), salt)
	return subtle.ConstantTimeCompare([]byte(got), []byte(r.local[cryptCheckKey])) == 1
}

// createCrypt is what zfs create -o encryption/keyformat/keylocation/
// pbkdf2iters asked for, after validation.
type createCrypt struct {
	suite, format, location string
	iters                   uint64
	hasSuite, hasFormat     bool
	hasLocation, hasIters   bool
}

// takeCryptProps removes the encryption properties from validated create
// properties (they are kept in hidden keys, or as keylocation on a root).
func takeCryptProps(props []kv) ([]kv, createCrypt) {
	var cc createCrypt
	out := props[:0:0]
	for _, p := range props {
		switch p.name {
		case "encryption":
			cc.suite, cc.hasSuite = p.value, true
		case "keyformat":
			cc.format, cc.hasFormat = p.value, p.value != "none"
		case "keylocation":
			cc.location, cc.hasLocation = p.value, true
		case "pbkdf2iters":
			cc.iters, _ = strconv.ParseUint(p.value, 10, 64)
			cc.hasIters = true
		default:
			out = append(out, p)
		}
	}
	return out, cc
}

// wantsKey says whether create properties make a new encryption root whose
// key comes from a key location, and which one and in what format (the
// raw -o values, before validation: a bad value fails validation later
// and the key read is then unused).
func wantsKey(props []kv) (location, format string, ok bool) {
	location = "prompt"
	for _, p := range props {
		switch lookupProp(p.name) {
		case propByName["keyformat"]:
			format = p.value
		case propByName["keylocation"]:
			location = p.value
		}
	}
	if format == "" || format == "none" {
		return "", "", false
	}
	return location, format, true
}

// applyCreateCrypt is zfs_crypto_create plus dmu_objset_create_crypt_check
// for a new dataset d under parent: it sets d's hidden encryption state and
// returns the keylocation to keep locally ("" for none), or the error zfs
// prints. key is the material read from the key location, if any.
func (m *Model) applyCreateCrypt(d, parent *dataset, cc createCrypt, key *keyInput, prefix string) (string, error) {
	pcrypt := "off"
	if parent != nil && encrypted(parent) {
		pcrypt = parent.head().local[cryptSuiteKey]
	}
	crypt := pcrypt
	if cc.hasSuite {
		crypt = cc.suite
	}
	hasProps := cc.hasLocation && cc.location != "none" || cc.hasFormat || cc.hasIters
	if crypt == "off" {
		if hasProps {
			return "", errCrypto(prefix, "Encryption must be turned on to set encryption properties.")
		}
		return "", nil
	}
	if crypt == "on" {
		crypt = defaultEncryptionSuite
	}
	location := ""
	if cc.hasLocation {
		location = cc.location
	}
	if pcrypt == "off" && location == "" && !cc.hasFormat {
		return "", errCrypto(prefix, "Keyformat required for new encryption root.")
	}
	if location != "" && !cc.hasFormat {
		return "", errCrypto(prefix, "Keyformat required for new encryption root.")
	}
	if cc.hasFormat && location == "" {
		location = "prompt"
	}
	if !cc.hasFormat {
		// A child of an encrypted parent shares its key, which must be loaded.
		if !m.keys[m.encRoot(parent).guid] {
			return "", errCrypto(prefix, "encryption root's key is not loaded or provided")
		}
		d.local[cryptSuiteKey] = crypt
		d.local[cryptRootKey] = parent.head().local[cryptRootKey]
		return "", nil
	}
	if key == nil {
		key = &keyInput{}
	}
	if key.err != nil {
		return "", errCrypto(prefix, key.err.Error())
	}
	if aux := validateKey(cc.format, key.material, true); aux != "" {
		return "", errCrypto(prefix, aux)
	}
	iters := uint64(defaultPBKDF2Iters)
	if cc.hasIters {
		if cc.format != "passphrase" {
			return "", errCrypto(prefix, "Cannot specify pbkdf2iters with a non-passphrase keyformat.")
		}
		iters = cc.iters
	}
	d.local[cryptSuiteKey] = crypt
	setRootKey(d, cc.format, iters, key.material)
	return location, nil
}

// cryptProp is the value of an encryption property of d, as zfs get shows
// it; ok=false when it has none (zfs shows "-").
func (m *Model) cryptProp(d *dataset, name string) (PropValue, bool) {
	pv := PropValue{Source: SourceNone, Received: "-"}
	enc := encrypted(d)
	var root *dataset
	if enc {
		root = m.encRoot(d)
	}
	switch name {
	case "encryption":
		if !enc {
			pv.Value, pv.Source = "off", SourceDefault
			return pv, true
		}
		pv.Value = d.head().local[cryptSuiteKey]
		return pv, true
	case "keyformat", "pbkdf2iters":
		if !enc || root == nil {
			pv.Value, pv.Source = "none", SourceDefault
			if name == "pbkdf2iters" {
				pv.Value = "0"
			}
			return pv, true
		}
		key := cryptFmtKey
		if name == "pbkdf2iters" {
			key = cryptItersKey
		}
		pv.Value = root.local[key]
		return pv, true
	case "encryptionroot":
		if !enc || root == nil {
			return pv, false
		}
		pv.Value = root.full
		return pv, true
	case "keystatus":
		if !enc {
			return pv, false
		}
		pv.Value = "unavailable"
		if m.keyLoaded(d) {
			pv.Value = "available"
		}
		return pv, true
	}
	return pv, false
}

// sendCryptCheck is what zfs send does with encrypted datasets: a stream
// with properties (-p, -R) needs the raw flag; a plain stream is the
// decrypted data, which needs the key loaded. Raw streams of encrypted
// datasets are not modelled (they would carry the wrapped keys).
func (m *Model) sendCryptCheck(items []sendItem, target *dataset, opts SendOptions) error {
	for _, it := range items {
		s := it.snap
		if !encrypted(s) {
			continue
		}
		switch {
		case opts.Raw && opts.Replicate:
			// A raw replication stream re-creates the hierarchy of
			// encryption roots on receive (recv_fix_encryption_hierarchy).
			return newErr(KindNotSupported, "cannot send '%s': raw replication streams (-w -R) of encrypted datasets are not modelled by this simulator", s.full)
		case opts.Raw:
			// The data as it is on disk: no key needed.
		case opts.Props || opts.Replicate:
			return newErr(KindCrypto, "cannot send %s@%s: encrypted dataset %s may not be sent with properties without the raw flag",
				target.parent.full, target.leaf, s.parent.full)
		case !m.keyLoaded(s):
			return errCrypto("warning: cannot send '"+s.full+"'", "source key must be loaded")
		}
	}
	return nil
}

// promoteCryptOK is dsl_dataset_promote_crypt_check: promoting clone c of
// a snapshot of o must not take c out of the encryption root it shares.
func (m *Model) promoteCryptOK(c, o *dataset) bool {
	if !encrypted(o) || o.origin != nil || m.encRoot(o) == o {
		return true
	}
	if o.parent == nil || c.parent == nil || !encrypted(o.parent) || !encrypted(c.parent) {
		return false
	}
	return m.encRoot(o.parent) == m.encRoot(c.parent)
}

// promoteCrypt is dsl_dataset_promote_crypt_sync: when o is the encryption
// root, the promoted clone c takes over its key, key location and every
// dataset that shared it.
func (m *Model) promoteCrypt(c, o *dataset) error {
	if !encrypted(o) || o.origin != nil || m.encRoot(o) != o {
		return nil
	}
	for _, k := range []string{cryptFmtKey, cryptItersKey, cryptSaltKey, cryptCheckKey, "keylocation"} {
		if v, ok := o.local[k]; ok {
			c.local[k] = v
			delete(o.local, k)
		}
	}
	was, now := strconv.FormatUint(o.guid, 10), strconv.FormatUint(c.guid, 10)
	for _, x := range m.byGUID {
		if !x.isSnap() && x.local[cryptRootKey] == was {
			x.local[cryptRootKey] = now
			if x != c && x != o {
				if err := m.writeRecord(x); err != nil {
					return err
				}
			}
		}
	}
	if m.keys[o.guid] {
		m.keys[c.guid] = true
	}
	delete(m.keys, o.guid)
	return nil
}

// streamCrypt is what a raw stream says about an encrypted dataset: its
// suite and its encryption root's wrapping parameters (OpenZFS sends the
// wrapped master key; the model's check value plays that part).
type streamCrypt struct {
	Suite  string `json:"suite"`
	Format string `json:"keyformat"`
	Iters  string `json:"pbkdf2iters"`
	Salt   string `json:"salt"`
	Check  string `json:"check"`
}

func (m *Model) streamCryptOf(s *dataset) *streamCrypt {
	r := m.encRoot(s)
	if r == nil {
		return nil
	}
	return &streamCrypt{Suite: s.head().local[cryptSuiteKey], Format: r.local[cryptFmtKey],
		Iters: r.local[cryptItersKey], Salt: r.local[cryptSaltKey], Check: r.local[cryptCheckKey]}
}

// apply makes a dataset new from a raw stream its own encryption root with
// the sender's key (dsl_crypto_recv_raw_key_sync): keylocation=prompt,
// the key not loaded.
func (c *streamCrypt) apply(d *dataset) {
	d.local[cryptSuiteKey] = c.Suite
	d.local[cryptRootKey] = strconv.FormatUint(d.guid, 10)
	d.local[cryptFmtKey] = c.Format
	d.local[cryptItersKey] = c.Iters
	d.local[cryptSaltKey] = c.Salt
	d.local[cryptCheckKey] = c.Check
	d.local["keylocation"] = "prompt"
}

// rawOverExisting is libzfs's check of a stream against an existing
// destination: no raw incremental onto an unencrypted dataset, and no -F
// overwrite of an encrypted one (or of a clear one by a raw stream).
func rawOverExisting(head *dataset, b streamBegin, full, force bool, prefix string) error {
	enc, raw := encrypted(head), b.Crypt != nil
	if !full && !enc && raw {
		return newErr(KindInvalid, "%s: cannot perform raw receive on top of existing unencrypted dataset", prefix)
	}
	if full && force && (raw && !enc || enc) {
		return newErr(KindInvalid, "%s: zfs receive -F cannot be used to destroy an encrypted filesystem or overwrite an unencrypted one with an encrypted one", prefix)
	}
	return nil
}
