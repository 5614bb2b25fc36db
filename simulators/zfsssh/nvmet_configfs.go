package zfsssh

import (
	"errors"
	"io"
	"strings"
)

// The kernel's configfs files of an nvmet host that nvmetcli does not
// model: NVMe in-band authentication (DH-HMAC-CHAP, Linux 5.19+), written
// with a shell redirect (cat > /sys/kernel/config/nvmet/hosts/<nqn>/dhchap_key).
// Like the kernel, the store checks only the key's "DHHC-1:<hash>:" head;
// a key that is otherwise wrong fails later, at connect. nvmetcli's
// saveconfig does not keep these files, so neither does the model's
// state file: a restart (a reboot of the storage host) forgets them.

// NVMetHostAuth is the DH-HMAC-CHAP configuration of one host.
type NVMetHostAuth struct {
	Key     string // dhchap_key
	CtrlKey string // dhchap_ctrl_key
	Hash    string // dhchap_hash, default hmac(sha256)
	DHGroup string // dhchap_dhgroup, default null
}

// errInvalid is EINVAL from a configfs store, as write(2) reports it.
var errInvalid = errors.New("Invalid argument")

var (
	nvmetHashes   = map[string]bool{"hmac(sha256)": true, "hmac(sha384)": true, "hmac(sha512)": true}
	nvmetDHGroups = map[string]bool{"null": true, "ffdhe2048": true, "ffdhe3072": true, "ffdhe4096": true, "ffdhe6144": true, "ffdhe8192": true}
)

// configfsHostFile opens an nvmet host's attribute file for writing; ok is
// false for paths this model does not serve.
func (m *nvmetModel) configfsHostFile(p string, root bool) (w io.WriteCloser, ok bool, err error) {
	rest, found := strings.CutPrefix(p, configfsNVMet+"/hosts/")
	if !found {
		return nil, false, nil
	}
	host, attr, found := strings.Cut(rest, "/")
	if !found || strings.Contains(attr, "/") {
		return nil, true, errPerm
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case !m.hasHost(host):
		return nil, true, errNotExist
	case !root:
		return nil, true, errPerm
	}
	switch attr {
	case "dhchap_key", "dhchap_ctrl_key", "dhchap_hash", "dhchap_dhgroup":
	default:
		return nil, true, errPerm // configfs makes no new files
	}
	return &hostAttrWriter{m: m, host: host, attr: attr}, true, nil
}

type hostAttrWriter struct {
	m          *nvmetModel
	host, attr string
}

// Write is one store into the attribute, as write(2) on configfs is.
func (w *hostAttrWriter) Write(b []byte) (int, error) {
	v := strings.TrimRight(string(b), "\n")
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	if !w.m.hasHost(w.host) {
		return 0, errors.New("No such file or directory")
	}
	if w.m.st.HostAuth == nil {
		w.m.st.HostAuth = map[string]NVMetHostAuth{}
	}
	a := w.m.st.HostAuth[w.host]
	switch w.attr {
	case "dhchap_key", "dhchap_ctrl_key":
		// nvmet_auth_set_key: "DHHC-1:%hhd:%*s", hash id 0 to 3.
		rest, ok := strings.CutPrefix(v, "DHHC-1:")
		if !ok || len(rest) < 3 || rest[0] != '0' || rest[1] < '0' || rest[1] > '3' || rest[2] != ':' {
			return 0, errInvalid
		}
		if w.attr == "dhchap_key" {
			a.Key = v
		} else {
			a.CtrlKey = v
		}
	case "dhchap_hash":
		if !nvmetHashes[v] {
			return 0, errInvalid
		}
		a.Hash = v
	case "dhchap_dhgroup":
		if !nvmetDHGroups[v] {
			return 0, errInvalid
		}
		a.DHGroup = v
	}
	w.m.st.HostAuth[w.host] = a
	return len(b), nil
}

func (w *hostAttrWriter) Close() error { return nil }
