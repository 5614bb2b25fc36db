package engine

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/config"
)

// testKey makes a key as nvme gen-dhchap-key prints it: n bytes of
// secret, its CRC-32 appended little-endian, in base64.
func testKey(hash string, n int, fill byte) string {
	secret := []byte(strings.Repeat(string(fill), n))
	b := binary.LittleEndian.AppendUint32(secret, crc32.ChecksumIEEE(secret))
	return "DHHC-1:" + hash + ":" + base64.StdEncoding.EncodeToString(b) + ":"
}

func TestCheckDHCHAPKey(t *testing.T) {
	good := testKey("01", 32, 'a')
	bad := []byte(good)
	bad[12] ^= 1 // one base64 character changed: the checksum fails
	for _, tc := range []struct {
		key, want string
	}{
		{testKey("00", 32, 'a'), ""},
		{testKey("00", 64, 'a'), ""},
		{good, ""},
		{testKey("02", 48, 'b'), ""},
		{testKey("03", 64, 'c'), ""},
		{"secret", "must start with DHHC-1:"},
		{strings.TrimSuffix(good, ":"), "closing colon"},
		{strings.Replace(good, ":01:", ":04:", 1), "its hash must be"},
		{"DHHC-1:01:not*base64:", "not base64"},
		{testKey("01", 48, 'a'), "wrong length"},
		{testKey("00", 20, 'a'), "wrong length"},
		{string(bad), "checksum"},
	} {
		got := CheckDHCHAPKey(tc.key)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%.20s...: %q, want %q", tc.key, got, tc.want)
		}
	}
}

// TestParseDHCHAP: problems name the key and never quote it.
func TestParseDHCHAP(t *testing.T) {
	host, ctrl := testKey("01", 32, 'h'), testKey("01", 32, 'c')
	malformed := "DHHC-1:01:c2VjcmV0LXRoYXQtbXVzdC1ub3QtbGVhaw==:"
	for _, tc := range []struct {
		name, yaml string
		allowList  bool
		want       []string // problems (substrings); none: valid
		on         bool
	}{
		{"none", "nvmeof: {}", true, nil, false},
		{"host key", "nvmeof:\n  dhchap:\n    hostKey: '" + host + "'", true, nil, true},
		{"both", "nvmeof:\n  dhchap:\n    hostKey: '" + host + "'\n    ctrlKey: '" + ctrl + "'", true, nil, true},
		{"malformed", "nvmeof:\n  dhchap:\n    hostKey: '" + malformed + "'", true, []string{"nvmeof.dhchap.hostKey: is not a DH-HMAC-CHAP key"}, true},
		{"ctrl alone", "nvmeof:\n  dhchap:\n    ctrlKey: '" + ctrl + "'", true, []string{"nvmeof.dhchap.ctrlKey: needs nvmeof.dhchap.hostKey"}, false},
		{"same keys", "nvmeof:\n  dhchap:\n    hostKey: '" + host + "'\n    ctrlKey: '" + host + "'", true, []string{"nvmeof.dhchap.ctrlKey: must differ"}, true},
		{"no allow-list", "nvmeof:\n  dhchap:\n    hostKey: '" + host + "'", false, []string{"nvmeof.dhchap: needs nvmeof.hostAccess: allowList"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := config.Parse([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			r := config.NewReader(tree)
			d := ParseDHCHAP(r, "nvmeof", tc.allowList)
			if d.On() != tc.on {
				t.Errorf("On() = %t, want %t", d.On(), tc.on)
			}
			got := config.Problems(r.Problems()).Error()
			if len(r.Problems()) != len(tc.want) {
				t.Fatalf("problems %q, want %q", got, tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("problems %q, want %q", got, w)
				}
			}
			for _, k := range []string{host, ctrl, malformed, "c2VjcmV0"} {
				if strings.Contains(got, k) {
					t.Errorf("problem quotes a key: %q", got)
				}
			}
		})
	}
}
