package infinia

import (
	"testing"

	"google.golang.org/grpc/codes"
)

func TestParseParams(t *testing.T) {
	two := parseYAML(t, `
accounts:
  clu1/red/csiAccount: {apis: [https://h], password: x, default_instance_ids: [1, 2], owneruid: "5", groupuid: "6"}
  clu1/blue/csiAccount: {apis: [https://h], password: x}
`)
	one := parseYAML(t, "accounts:\n  clu1/red/csiAccount: {apis: [https://h], password: x, perms: \"0700\"}\n")
	setTwo, _ := parseAccounts(two)
	setOne, _ := parseAccounts(one)
	d := &Driver{file: "/etc/switchyard/config.yaml"}

	bad := []struct {
		name   string
		set    *accountSet
		params map[string]string
		frags  []string
	}{
		{"account required with two", setTwo, map[string]string{"service": "red/svc"}, []string{"parameter account", "clu1/blue/csiAccount, clu1/red/csiAccount"}},
		{"unknown account", setTwo, map[string]string{"account": "clu1/x/y", "service": "red/svc"}, []string{"\"clu1/x/y\"", "/etc/switchyard/config.yaml", "clu1/red/csiAccount"}},
		{"service required", setOne, map[string]string{}, []string{"parameter service", "required"}},
		{"service without slash", setOne, map[string]string{"service": "csiService"}, []string{"parameter service", "\"csiService\"", "<subtenant>/<service>"}},
		{"service with two slashes", setOne, map[string]string{"service": "a/b/c"}, []string{"\"a/b/c\""}},
		{"instances not numeric", setOne, map[string]string{"service": "r/s", "instances": "1,x"}, []string{"parameter instances", "\"1,x\"", "\"x\""}},
		{"dataport", setOne, map[string]string{"service": "r/s", "dataport": "http"}, []string{"parameter dataport", "\"http\""}},
		{"owneruid alone", setOne, map[string]string{"service": "r/s", "owneruid": "1"}, []string{"parameter groupuid", "together"}},
		{"perms", setOne, map[string]string{"service": "r/s", "perms": "rwx"}, []string{"parameter perms", "\"rwx\""}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := d.parseParams(tc.set, tc.params)
			wantCode(t, err, codes.InvalidArgument, tc.frags...)
		})
	}

	p, err := d.parseParams(setOne, map[string]string{"service": "red/csiService"})
	if err != nil {
		t.Fatal(err)
	}
	if p.acct.key != acctKey || p.subtenant != "red" || p.service != "csiService" || p.dataPort != 4420 || p.perms != "0700" {
		t.Fatalf("single account not the default, or defaults missing: %+v", p)
	}
	p, err = d.parseParams(setTwo, map[string]string{"account": acctKey, "service": "red/s", "instances": " 3, 4 ", "dataport": "4421", "perms": "0750"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.instances) != 2 || p.instances[0] != 3 || p.dataPort != 4421 || p.owner != "5" || p.group != "6" || p.perms != "0750" {
		t.Fatalf("overrides not applied: %+v", p)
	}
	p, _ = d.parseParams(setTwo, map[string]string{"account": acctKey, "service": "red/s", "owneruid": "7", "groupuid": "8"})
	if p.owner != "7" || p.group != "8" || len(p.instances) != 2 {
		t.Fatalf("owner/group override or default instances wrong: %+v", p)
	}
}
