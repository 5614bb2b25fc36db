package suites

import (
	"maps"
	"slices"
	"testing"
)

// Listings as the ZFS-over-SSH simulator's targetcli and nvmetcli print
// them over SSH (captured 2026-11-26), dots shortened.
func TestConfigshellPaths(t *testing.T) {
	for _, c := range []struct {
		name, root, out string
		want            []string
	}{
		{"targetcli ls /iscsi 4", "/iscsi", `o- iscsi ........ [Targets: 1]
  o- iqn.2003-01.org.linux-iscsi.e2e:v1 ........ [TPGs: 1]
    o- tpg1 ........ [no-gen-acls, no-auth]
      o- acls ........ [ACLs: 0]
      o- luns ........ [LUNs: 1]
      | o- lun0 ........ [block/v1 (/dev/zvol/tank/v1) (default_tg_pt_gp)]
      o- portals ........ [Portals: 1]
        o- [::0]:3260 ........ [OK]
`, []string{
			"/iscsi",
			"/iscsi/iqn.2003-01.org.linux-iscsi.e2e:v1",
			"/iscsi/iqn.2003-01.org.linux-iscsi.e2e:v1/tpg1",
			"/iscsi/iqn.2003-01.org.linux-iscsi.e2e:v1/tpg1/acls",
			"/iscsi/iqn.2003-01.org.linux-iscsi.e2e:v1/tpg1/luns",
			"/iscsi/iqn.2003-01.org.linux-iscsi.e2e:v1/tpg1/luns/lun0",
			"/iscsi/iqn.2003-01.org.linux-iscsi.e2e:v1/tpg1/portals",
			"/iscsi/iqn.2003-01.org.linux-iscsi.e2e:v1/tpg1/portals/[::0]:3260",
		}},
		{"nvmetcli ls /ports 3", "/ports", `o- ports ........ [...]
  o- 1 ........ [trtype=tcp, traddr=127.0.0.1, trsvcid=4420]
    o- referrals ........ [...]
    o- subsystems ........ [...]
      o- nqn.2003-01.org.linux-nvme.e2e:v1 ........ [...]
`, []string{"/ports", "/ports/1", "/ports/1/referrals", "/ports/1/subsystems", "/ports/1/subsystems/nqn.2003-01.org.linux-nvme.e2e:v1"}},
		{"a deeper root", "/backstores/block", "o- block ........ [Storage Objects: 1]\n  o- v1 ........ [/dev/zvol/tank/v1 (1.0GiB) write-thru activated]\r\n",
			[]string{"/backstores/block", "/backstores/block/v1"}},
		{"a traceback lists nothing", "/subsystems", "Traceback (most recent call last):\n  File \"/usr/sbin/nvmetcli\", line 8, in <module>\n", nil},
	} {
		got := slices.Sorted(maps.Keys(configshellPaths(c.out, c.root)))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
