package zfsmodel

import (
	"strings"
	"testing"
)

// TestOutputFormats checks human and parsable output, headers, column
// widths and alignment against what zfs prints.
func TestOutputFormats(t *testing.T) {
	m, _ := newModel(t, 10<<30)
	for _, l := range []string{
		"zfs create -p tank/k8s/vols", "zfs create -V 1G tank/k8s/vols/pvc-a",
		"zfs create -s -V 1536M tank/k8s/vols/pvc-b", "zfs create -o refquota=5G tank/k8s/vols/pvc-c",
		"zfs set democratic-csi:managed_resource=true tank/k8s/vols/pvc-c", "zfs snapshot tank/k8s/vols/pvc-c@snap-1",
	} {
		must(t, m, l)
	}
	resv := niceBytes(zvolReservation(1<<30, 16384, 1)) // 1.02G
	cases := []struct {
		cmd, want string
	}{
		{"zfs list -r tank/k8s",
			"NAME                  USED  AVAIL  REFER  MOUNTPOINT\n" +
				"tank/k8s             1.02G  8.98G    96K  /tank/k8s\n" +
				"tank/k8s/vols        1.02G  8.98G    96K  /tank/k8s/vols\n" +
				"tank/k8s/vols/pvc-a  " + resv + "  10.0G     0B  -\n" +
				"tank/k8s/vols/pvc-b     0B  8.98G     0B  -\n" +
				"tank/k8s/vols/pvc-c    96K  5.00G    96K  /tank/k8s/vols/pvc-c\n"},
		{"zfs list -Hp -o name,volsize,refquota,refreservation -r tank/k8s/vols",
			"tank/k8s/vols\t-\t0\t0\n" +
				"tank/k8s/vols/pvc-a\t1073741824\t-\t1092616192\n" +
				"tank/k8s/vols/pvc-b\t1610612736\t-\t0\n" +
				"tank/k8s/vols/pvc-c\t-\t5368709120\t0\n"},
		{"zfs list -o name,volsize,refreservation,democratic-csi:managed_resource -r tank/k8s/vols",
			"NAME                 VOLSIZE  REFRESERV  DEMOCRATIC-CSI:MANAGED_RESOURCE\n" +
				"tank/k8s/vols              -       none  -\n" +
				"tank/k8s/vols/pvc-a       1G      1.02G  -\n" +
				"tank/k8s/vols/pvc-b    1.50G       none  -\n" +
				"tank/k8s/vols/pvc-c        -       none  true\n"},
		{"zfs list -t snapshot -o name,used,refer tank/k8s/vols/pvc-c",
			"NAME                         USED  REFER\n" +
				"tank/k8s/vols/pvc-c@snap-1     0B    96K\n"},
		{"zfs list -H -d 1 -o name tank/k8s", "tank/k8s\ntank/k8s/vols\n"},
		{"zfs list -H -o name -s volsize -r tank/k8s/vols", "tank/k8s/vols/pvc-a\ntank/k8s/vols/pvc-b\ntank/k8s/vols\ntank/k8s/vols/pvc-c\n"},
		{"zfs list -H -o name -S volsize -r tank/k8s/vols", "tank/k8s/vols/pvc-b\ntank/k8s/vols/pvc-a\ntank/k8s/vols\ntank/k8s/vols/pvc-c\n"},
		{"zfs get volsize,refquota tank/k8s/vols/pvc-a tank/k8s/vols/pvc-c",
			"NAME                 PROPERTY  VALUE     SOURCE\n" +
				"tank/k8s/vols/pvc-a  volsize   1G        local\n" +
				"tank/k8s/vols/pvc-a  refquota  -         -\n" +
				"tank/k8s/vols/pvc-c  volsize   -         -\n" +
				"tank/k8s/vols/pvc-c  refquota  5G        local\n"},
		{"zfs get -Hp -o name,property,value,received,source refquota,democratic-csi:managed_resource tank/k8s/vols/pvc-c",
			"tank/k8s/vols/pvc-c\trefquota\t5368709120\t-\tlocal\n" +
				"tank/k8s/vols/pvc-c\tdemocratic-csi:managed_resource\ttrue\t-\tlocal\n"},
		{"zfs get -o value,name refquota tank/k8s/vols/pvc-c", "VALUE     NAME\n5G        tank/k8s/vols/pvc-c\n"},
		{"zfs get -t snapshot -H -o name,value referenced tank/k8s/vols/pvc-c", "tank/k8s/vols/pvc-c@snap-1\t96K\n"},
		{"zfs get -H -o value -p creation,used tank/k8s/vols/pvc-b", "__CREATION__\n0\n"},
		{"zpool list -o name,size,health,altroot", "NAME   SIZE    HEALTH  ALTROOT\ntank    10G    ONLINE  -\n"},
		{"zpool list -Hp -o name,size,free", "tank\t10737418240\t__FREE__\n"},
		{"zpool get -H -o value size,health,capacity tank", "10G\nONLINE\n0%\n"},
	}
	info, _ := m.Get("tank/k8s/vols/pvc-b")
	for _, c := range cases {
		want := strings.ReplaceAll(c.want, "__CREATION__", itoa(int(info.Creation.Unix())))
		if strings.Contains(want, "__FREE__") {
			m.mu.RLock()
			m.spaceMu.Lock()
			free := 10<<30 - m.poolAlloc(m.pools["tank"])
			m.spaceMu.Unlock()
			m.mu.RUnlock()
			want = strings.ReplaceAll(want, "__FREE__", itoa(int(free)))
		}
		if got := must(t, m, c.cmd); got != want {
			t.Errorf("%s:\n%s\nwant:\n%s", c.cmd, got, want)
		}
	}
	if r := sh(m, "zfs list -t snapshot tank/k8s/vols"); r.code != 0 || r.stdout != "" || r.stderr != "no datasets available\n" {
		t.Errorf("empty list: %+v", r)
	}
	creation := must(t, m, "zfs get -H -o value creation tank")
	if len(strings.Fields(creation)) != 5 {
		t.Errorf("creation date %q is not like 'Sat Nov 21 18:43 2026'", creation)
	}
}
