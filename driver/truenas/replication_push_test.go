package truenas_test

import (
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
)

// replication.sshCredentials is one value, read by the API drivers only:
// config check says so for a list and for an SSH driver.
func TestPushCredentialConfig(t *testing.T) {
	base := "httpConnection:\n  host: nas.example.com\n  apiKey: 1-x\nzfs:\n  datasetParentName: tank/k8s/v\n  detachedSnapshotsDatasetParentName: tank/k8s/s\n"
	cases := []struct {
		driver, extra, want string
	}{
		{"freenas-api-nfs", "replication:\n  sshCredentials: to-nas-b\n", ""},
		{"freenas-api-iscsi", "replication:\n  sshCredentials: 3\n", ""},
		{"freenas-api-nfs", "replication:\n  sshCredentials: [a, b]\n", "replication.sshCredentials: must be a single value"},
		{"freenas-nfs", "sshConnection:\n  host: nas\n  username: root\n  password: x\nreplication:\n  sshCredentials: to-nas-b\n", "only the freenas-api-* drivers"},
	}
	for _, c := range cases {
		typ, ok := backend.Lookup(c.driver)
		if !ok {
			t.Fatalf("no driver %s", c.driver)
		}
		tree, err := config.Parse([]byte("driver: " + c.driver + "\n" + base + c.extra))
		if err != nil {
			t.Fatal(err)
		}
		var found string
		for _, p := range typ.Validate(tree) {
			if strings.HasPrefix(p.Key, "replication") {
				found = p.Key + ": " + p.Msg
			}
		}
		if (c.want == "") != (found == "") || !strings.Contains(found, c.want) {
			t.Errorf("%s %q: problem %q, want %q", c.driver, c.extra, found, c.want)
		}
	}
}
