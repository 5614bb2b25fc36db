package engine

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/config"
)

// DHCHAP is NVMe in-band authentication (DH-HMAC-CHAP, NVMe TP 8006) for
// a connection with nvmeof.hostAccess: allowList: ControllerPublishVolume
// sets HostKey (and CtrlKey, for bidirectional authentication) on the
// node's host entry before it links the host to the subsystem, and nodes
// present the same keys from the StorageClass node-stage secret
// (dhchapSecret, dhchapCtrlSecret: driver/node). One key pair per connection: the node
// never reads connection files, and CSI gives a node-stage secret per
// StorageClass, not per node, so a per-host key could not reach its node
// alone (docs/security.md, "NVMe DH-HMAC-CHAP").
//
// The keys are secrets: they go to the storage host only (over stdin or in
// an API call whose logged form is redacted) and never into logs, errors,
// volume_context or publish_context.
type DHCHAP struct {
	HostKey string // DHHC-1:xx:<base64>:, the key the host proves it holds
	CtrlKey string // optional: the key the target proves it holds
}

// On reports whether DH-CHAP is configured.
func (d DHCHAP) On() bool { return d.HostKey != "" }

// Secrets lists the keys, for redaction.
func (d DHCHAP) Secrets() []string {
	var s []string
	for _, k := range []string{d.HostKey, d.CtrlKey} {
		if k != "" {
			s = append(s, k)
		}
	}
	return s
}

// ParseDHCHAP reads <section>.dhchap (hostKey, ctrlKey). allowList says
// whether <section>.hostAccess is allowList: DH-CHAP is set per granted
// host, so without an allow-list there is no host to set it on. Problems
// name the key, never its value.
func ParseDHCHAP(r *config.Reader, section string, allowList bool) DHCHAP {
	key := section + ".dhchap"
	d := DHCHAP{HostKey: r.Str(key + ".hostKey"), CtrlKey: r.Str(key + ".ctrlKey")}
	for _, k := range []struct{ name, value string }{{"hostKey", d.HostKey}, {"ctrlKey", d.CtrlKey}} {
		if k.value == "" {
			continue
		}
		if why := CheckDHCHAPKey(k.value); why != "" {
			r.Add(key+"."+k.name, "is not a DH-HMAC-CHAP key: %s (make one with `nvme gen-dhchap-key -n <any NQN>`)", why)
		}
	}
	switch {
	case d.CtrlKey != "" && d.HostKey == "":
		r.Add(key+".ctrlKey", "needs %s.hostKey: bidirectional authentication is on top of the host's own", key)
	case d.CtrlKey != "" && d.CtrlKey == d.HostKey:
		r.Add(key+".ctrlKey", "must differ from %s.hostKey: with one key for both directions the target proves nothing the host does not know", key)
	}
	if d.On() && !allowList {
		r.Add(key, "needs %s.hostAccess: allowList: the keys are set on each host that ControllerPublishVolume grants", section)
	}
	return d
}

// dhchapKeyLens are the lengths of a decoded key: 32, 48 or 64 bytes of
// secret and its CRC-32.
var dhchapKeyLens = map[int]bool{36: true, 52: true, 68: true}

// CheckDHCHAPKey says what is wrong with a key in the format `nvme
// gen-dhchap-key` prints and the kernel reads: DHHC-1:<hash 00-03>:
// <base64 of the secret and its little-endian CRC-32>:, the secret 32,
// 48 or 64 bytes (as many as the hash's output when the hash is not 00).
// "" means the key is well formed. The answer never quotes the key.
func CheckDHCHAPKey(key string) string {
	rest, ok := strings.CutPrefix(key, "DHHC-1:")
	if !ok {
		return "it must start with DHHC-1:"
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 3 || parts[2] != "" {
		return "it must be DHHC-1:<hash>:<base64>: with the closing colon"
	}
	hash := map[string]int{"00": 0, "01": 32, "02": 48, "03": 64}
	want, ok := hash[parts[0]]
	if !ok {
		return "its hash must be 00, 01 (SHA-256), 02 (SHA-384) or 03 (SHA-512)"
	}
	b, err := base64.StdEncoding.DecodeString(parts[1])
	if err != nil {
		return "its key is not base64"
	}
	if !dhchapKeyLens[len(b)] || want != 0 && len(b) != want+4 {
		return "its key has the wrong length (32, 48 or 64 bytes, as long as the hash)"
	}
	secret, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.ChecksumIEEE(secret) != sum {
		return "its checksum does not match (a character was lost or changed)"
	}
	return ""
}
