package suites

import (
	"reflect"
	"testing"
)

// The report and table as cmd/switchyard prints them (orphans.go
// printReport, connections.go printConnections).
func TestParseOrphanReport(t *testing.T) {
	out := "volumes on the backend with no PersistentVolume: 1\n  v:c/pvc-1\n" +
		"snapshots on the backend with no VolumeSnapshotContent: 0\n" +
		"handles Kubernetes knows whose volume is gone from the backend: 2\n  v:c/pvc-2\n  v:d/pvc-3\n" +
		"handles Kubernetes knows whose snapshot is gone from the backend: 0\n" +
		"read-only report: nothing was deleted\n"
	r := parseOrphanReport(out)
	want := map[string][]string{
		"volumes on the backend with no PersistentVolume":                {"v:c/pvc-1"},
		"handles Kubernetes knows whose volume is gone from the backend": {"v:c/pvc-2", "v:d/pvc-3"},
	}
	for k, v := range want {
		if !reflect.DeepEqual(r[k], v) {
			t.Errorf("%s: %q, want %q", k, r[k], v)
		}
	}
	if n := len(r["snapshots on the backend with no VolumeSnapshotContent"]); n != 0 {
		t.Errorf("snapshots: %d entries, want 0", n)
	}
}

func TestConnectionsRow(t *testing.T) {
	out := "CONNECTION  STATE        TYPE             FAMILY     VERSION      VOLUMES\n" +
		"nas-a       loaded       zfs-generic-nfs  nfs, file  zfs-2.2.7-1  2\n" +
		"nas-down    unreachable  zfs-generic-nfs  nfs, file  -            -\n" +
		"nas-a: not this line\n"
	got := connectionsRow(out, "nas-a")
	want := []string{"nas-a", "loaded", "zfs-generic-nfs", "nfs, file", "zfs-2.2.7-1", "2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("row %q, want %q", got, want)
	}
	if got := connectionsRow(out, "nas-b"); got != nil {
		t.Errorf("row of an unknown connection: %q", got)
	}
}
