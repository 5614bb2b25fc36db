package infinia

import (
	"fmt"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/volumeid"
)

// MaxVolumeIDLen is the longest handle the driver makes: CSI's 128 bytes
// minus "v:" and 30 bytes for the proxy's connection name and "/".
const MaxVolumeIDLen = 128 - len("v:") - 30

// maxVolumeNameLen is Infinia's limit on volume names.
const maxVolumeNameLen = 128

// handle is DDN's volume handle:
// <cluster>/<tenant>/<account>:<subtenant>/<service>/<volume>.
type handle struct {
	account   string // <cluster>/<tenant>/<account>, the config key
	subtenant string
	service   string
	volume    string
}

func (h handle) String() string {
	return h.account + ":" + h.subtenant + "/" + h.service + "/" + h.volume
}

// parseHandle reads a handle; ok is false when s cannot name a volume
// (callers answer NOT_FOUND, or success for deletes). Accepted handles
// format back to exactly s.
func parseHandle(s string) (handle, bool) {
	acct, rest, ok := strings.Cut(s, ":")
	if !ok || checkAccountKey(acct) != "" {
		return handle{}, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || !pathNameOK(parts[0]) || !pathNameOK(parts[1]) || volumeNameProblem(parts[2]) != "" {
		return handle{}, false
	}
	return handle{account: acct, subtenant: parts[0], service: parts[1], volume: parts[2]}, true
}

// pathNameOK accepts a subtenant or service name: it becomes one escaped
// URL path segment, so only names that could be read as "here" or "up"
// and control characters are refused.
func pathNameOK(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}

// volumeNameProblem checks Infinia's volume name rule
// [A-Za-z0-9][A-Za-z0-9._-]{0,127}; it returns why name breaks it, or "".
func volumeNameProblem(name string) string {
	if len(name) > maxVolumeNameLen {
		return fmt.Sprintf("volume name %q is %d bytes; Infinia allows %d", name, len(name), maxVolumeNameLen)
	}
	return nameCharsProblem(name)
}

// nameCharsProblem is the volume name rule without the length limit.
func nameCharsProblem(name string) string {
	switch {
	case name == "":
		return "a volume name must not be empty"
	case !volumeid.IsAlnum(name[0]):
		return fmt.Sprintf("volume name %q must begin with a letter or digit", name)
	}
	if bad := volumeid.InvalidChars(name, func(c byte) bool { return volumeid.IsAlnum(c) || c == '.' || c == '_' || c == '-' }); bad != "" {
		return fmt.Sprintf("volume name %q contains invalid characters %q: Infinia allows only A-Z, a-z, 0-9, '.', '_' and '-'", name, bad)
	}
	return ""
}

// newHandle names the volume for a CreateVolume request name: the name
// itself, shortened (volumeid.Shorten) when the whole handle would exceed
// MaxVolumeIDLen. It fails when the account and service leave too little
// room for even a shortened name.
func newHandle(acct, subtenant, service, name string) (handle, error) {
	if why := nameCharsProblem(name); why != "" {
		return handle{}, fmt.Errorf("%s", why)
	}
	h := handle{account: acct, subtenant: subtenant, service: service}
	room := MaxVolumeIDLen - len(h.String())
	if len(name) <= room {
		h.volume = name
		return h, nil
	}
	const minShortened = 34 // volumeid.Shorten keeps at least one byte and a "-" plus 32 hex digits
	if room < minShortened {
		return handle{}, fmt.Errorf("the volume handle %s%s would be %d bytes, over the limit of %d (CSI's 128 minus room for the proxy's v:<connection>/ prefix), "+
			"and only %d bytes are left for the volume name (a shortened name needs %d): use shorter account, subtenant or service names",
			h.String(), name, len(h.String())+len(name), MaxVolumeIDLen, max(room, 0), minShortened)
	}
	h.volume = volumeid.Shorten(name, room)
	return h, nil
}
