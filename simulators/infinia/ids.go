package infinia

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// nameRE is the rule for volume, subsystem and tree object names.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func validName(n string) bool { return nameRE.MatchString(n) }

// maxNQN is the NVMe specification's limit on an NQN (bytes).
const maxNQN = 223

// subsystemNQN is the NQN of subsystem name in c/t/s.
func subsystemNQN(c, t, s, name string) string {
	return fmt.Sprintf("nqn.2023-03.com.ddn:red:%s:%s:%s:%s", c, t, s, name)
}

// validHostNQN accepts what nvmet accepts as a host NQN in practice: an
// "nqn." name of printable characters without "/" (it becomes a configfs
// directory name) within the NVMe length limit.
func validHostNQN(n string) bool {
	if !strings.HasPrefix(n, "nqn.") || len(n) > maxNQN || len(n) <= len("nqn.") {
		return false
	}
	for _, r := range n {
		if r <= ' ' || r > '~' || r == '/' {
			return false
		}
	}
	return true
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return b
}

// newUUID is a random (version 4) UUID in lower case.
func newUUID() string {
	b := randomBytes(16)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// nguid is the namespace's NGUID: its uuid in upper case without dashes.
func nguid(uuid string) string { return strings.ToUpper(strings.ReplaceAll(uuid, "-", "")) }

// newWWN is an NAA type 6 (registered extended) name: "naa." and 32 hex
// digits, the first being 6.
func newWWN() string { return "naa.6" + hex.EncodeToString(randomBytes(16))[:31] }

// newSerial is a 20-character serial number (the NVMe SN field's width).
func newSerial() string { return strings.ToUpper(hex.EncodeToString(randomBytes(10))) }

// splitLevel splits "c/t/s" into its parts ("" has none).
func splitLevel(level string) []string {
	if level == "" {
		return nil
	}
	return strings.Split(level, "/")
}
