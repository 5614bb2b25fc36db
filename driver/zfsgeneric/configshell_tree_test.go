package zfsgeneric

import (
	"reflect"
	"sort"
	"testing"
)

// What targetcli and nvmetcli print for `ls <path> <depth>` is read into
// node paths; anything but a complete listing of the asked-for roots is
// refused, so a failed run never reads as "no targets".
func TestConfigshellTree(t *testing.T) {
	const iscsi = "o- iscsi .............................................. [Targets: 2]\r\n" +
		"  o- iqn.2003-01.org.test:pvc-1 ............................ [TPGs: 1]\r\n" +
		"  | o- tpg1 ................................. [no-gen-acls, no-auth]\r\n" +
		"  |   o- acls ............................................ [ACLs: 0]\r\n" +
		"  |   o- luns ............................................ [LUNs: 1]\r\n" +
		"  |   | o- lun0 ....... [block/pvc-1 (/dev/zvol/tank/k8s/pvc-1) (default_tg_pt_gp)]\r\n" +
		"  |   o- portals ...................................... [Portals: 1]\r\n" +
		"  |     o- 0.0.0.0:3260 ....................................... [OK]\r\n" +
		"  o- iqn.2003-01.org.test:pvc-2 ............................ [TPGs: 1]\r\n" +
		"    o- tpg1 ................................. [no-gen-acls, no-auth]\r\n" +
		"      o- luns ............................................ [LUNs: 0]\r\n"
	nvmet := "o- subsystems .................................................. [...]\n" +
		"  o- nqn.2003-01.org.test:pvc-3 ... [version=1.3, allow_any=1, serial=1]\n" +
		"    o- allowed_hosts ............................................ [...]\n" +
		"    o- namespaces ............................................... [...]\n" +
		"      o- 1 ........ [path=/dev/zvol/tank/k8s/pvc-3, uuid=…, grpid=1, enabled]\n" +
		"o- ports ....................................................... [...]\n" +
		"  o- 1 ............................. [trtype=tcp, traddr=127.0.0.1, trsvcid=4420]\n" +
		"    o- referrals ................................................ [...]\n" +
		"    o- subsystems ............................................... [...]\n" +
		"      o- nqn.2003-01.org.test:pvc-3 ............................... [...]\n"
	for _, c := range []struct {
		name     string
		text     string
		roots    []string
		want     []string
		complete bool
	}{
		{"iscsi", iscsi, []string{"/iscsi"}, []string{
			"/iscsi/iqn.2003-01.org.test:pvc-1", "/iscsi/iqn.2003-01.org.test:pvc-1/tpg1", "/iscsi/iqn.2003-01.org.test:pvc-1/tpg1/acls",
			"/iscsi/iqn.2003-01.org.test:pvc-1/tpg1/luns", "/iscsi/iqn.2003-01.org.test:pvc-1/tpg1/luns/lun0",
			"/iscsi/iqn.2003-01.org.test:pvc-1/tpg1/portals", "/iscsi/iqn.2003-01.org.test:pvc-1/tpg1/portals/0.0.0.0:3260",
			"/iscsi/iqn.2003-01.org.test:pvc-2", "/iscsi/iqn.2003-01.org.test:pvc-2/tpg1", "/iscsi/iqn.2003-01.org.test:pvc-2/tpg1/luns",
		}, true},
		{"coloured", "\x1b[1mo- \x1b[0m\x1b[34miscsi\x1b[0m ..... [Targets: 1]\n  o- \x1b[34miqn.x:a\x1b[0m ... [TPGs: 1]\n", []string{"/iscsi"}, []string{"/iscsi/iqn.x:a"}, true},
		{"prompts", "targetcli shell version 2.1.53\r\n\r\n/> o- iscsi ..... [Targets: 1]\r\n  o- iqn.x:a ... [TPGs: 1]\r\n/> /> exit\r\n", []string{"/iscsi"}, []string{"/iscsi/iqn.x:a"}, true},
		{"two prompted trees", "/> o- subsystems ... [...]\n  o- nqn.x:a ... [...]\n/> o- ports ... [...]\n  o- 1 ... [...]\n", []string{"/subsystems", "/ports"}, []string{"/subsystems/nqn.x:a", "/ports/1"}, true},
		{"a banner first", "targetcli shell version 2.1.53\nCopyright 2011-2013 by Datera, Inc and others.\n\n" + "o- iscsi ... [Targets: 0]\n", []string{"/iscsi"}, nil, true},
		{"two trees", nvmet, []string{"/subsystems", "/ports"}, []string{
			"/subsystems/nqn.2003-01.org.test:pvc-3", "/subsystems/nqn.2003-01.org.test:pvc-3/allowed_hosts",
			"/subsystems/nqn.2003-01.org.test:pvc-3/namespaces", "/subsystems/nqn.2003-01.org.test:pvc-3/namespaces/1",
			"/ports/1", "/ports/1/referrals", "/ports/1/subsystems", "/ports/1/subsystems/nqn.2003-01.org.test:pvc-3",
		}, true},
		{"the second tree missing", nvmet[:len(nvmet)/2], []string{"/subsystems", "/ports"}, nil, false},
		{"nothing printed", "", []string{"/iscsi"}, nil, false},
		{"the tool failed", "injected fault\n", []string{"/iscsi"}, nil, false},
		{"a traceback", "Traceback (most recent call last):\n  File \"/usr/bin/targetcli\", line 8\nEOFError: Ran out of input\n", []string{"/iscsi"}, nil, false},
		{"another tree", "o- backstores ... [...]\n  o- block ... [Storage Objects: 0]\n", []string{"/iscsi"}, nil, false},
		{"a node below nothing", "o- iscsi ... [Targets: 1]\n      o- lun0 ... [x]\n", []string{"/iscsi"}, nil, false},
	} {
		paths, complete := configshellTree(c.text, c.roots...)
		if complete != c.complete {
			t.Errorf("%s: complete = %v, want %v", c.name, complete, c.complete)
		}
		if !c.complete {
			continue
		}
		var got []string
		for p := range paths {
			got = append(got, p)
		}
		sort.Strings(got)
		want := append([]string(nil), c.want...)
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: paths\n got %q\nwant %q", c.name, got, want)
		}
	}
}
