package infinia

import (
	"strings"
	"testing"
	"time"
)

func TestValidateGoodConfig(t *testing.T) {
	doc := `
accounts:
  clu1/red/csiAccount:
    apis: [https://a.example.com:443, https://b.example.com]
    password: 1234
    zone: zone-a
    insecureSkipVerify: false
    default_instance_ids: [1, 2, 3]
    default_data_port: 4421
    owneruid: "1000"
    groupuid: "1000"
    perms: "0750"
    timeout: 10s
    maxConnsPerHost: 4
  clu1/other/csiAccount:
    apis: https://10.3.4.4:443
    password: pw
`
	set, ps := parseAccounts(parseYAML(t, doc))
	if len(ps) > 0 {
		t.Fatalf("unexpected problems: %v", ps)
	}
	if strings.Join(set.keys, ",") != "clu1/other/csiAccount,clu1/red/csiAccount" {
		t.Fatalf("keys %v", set.keys)
	}
	a := set.byKey[acctKey]
	if a.cluster != "clu1" || a.tenant != "red" || a.name != "csiAccount" || a.password != "1234" || a.insecure ||
		a.zone != "zone-a" || len(a.apis) != 2 || a.dataPort != 4421 || a.timeout != 10*time.Second || a.maxConns != 4 ||
		a.owner != "1000" || a.group != "1000" || a.perms != "0750" || len(a.instances) != 3 {
		t.Fatalf("parsed %+v", a)
	}
	o := set.byKey["clu1/other/csiAccount"]
	if !o.insecure || o.dataPort != 4420 || len(o.apis) != 1 || o.instances != nil {
		t.Fatalf("defaults not applied: %+v", o)
	}
}

func TestValidateNamesEveryBadKey(t *testing.T) {
	const base = "accounts.clu1/red/csiAccount."
	cases := []struct {
		name, account string // account section body (indented 4)
		key, msg      string
	}{
		{"no apis", "password: x", base + "apis", "required"},
		{"apis not a URL", "apis: [infinia.example.com]\n    password: x", base + "apis", "https://"},
		{"apis without host", "apis: [\"https://\"]\n    password: x", base + "apis", "no host"},
		{"no password", "apis: [https://h]", base + "password", "required"},
		{"owneruid alone", "apis: [https://h]\n    password: x\n    owneruid: \"1000\"", base + "groupuid", "together"},
		{"groupuid alone", "apis: [https://h]\n    password: x\n    groupuid: \"1000\"", base + "owneruid", "together"},
		{"owneruid not numeric", "apis: [https://h]\n    password: x\n    owneruid: root\n    groupuid: \"0\"", base + "owneruid", "numeric"},
		{"perms not octal", "apis: [https://h]\n    password: x\n    perms: \"0789\"", base + "perms", "octal"},
		{"perms unquoted", "apis: [https://h]\n    password: x\n    perms: 750", base + "perms", "quoted"},
		{"instance id not int", "apis: [https://h]\n    password: x\n    default_instance_ids: [1, two]", base + "default_instance_ids[1]", "positive integer"},
		{"bad data port", "apis: [https://h]\n    password: x\n    default_data_port: 70000", base + "default_data_port", "TCP port"},
		{"bad timeout", "apis: [https://h]\n    password: x\n    timeout: soon", base + "timeout", "duration"},
		{"bad maxConnsPerHost", "apis: [https://h]\n    password: x\n    maxConnsPerHost: 0", base + "maxConnsPerHost", "1 to 1024"},
		{"bad caCert", "apis: [https://h]\n    password: x\n    caCert: hello", base + "caCert", "PEM"},
		{"bad insecureSkipVerify", "apis: [https://h]\n    password: x\n    insecureSkipVerify: maybe", base + "insecureSkipVerify", "true or false"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := "accounts:\n  clu1/red/csiAccount:\n    " + tc.account + "\n"
			ps := Validate(parseYAML(t, doc))
			for _, p := range ps {
				if p.Key == tc.key && strings.Contains(p.Msg, tc.msg) {
					return
				}
			}
			t.Fatalf("want a problem at %s mentioning %q, got %v", tc.key, tc.msg, ps)
		})
	}
}

func TestValidateAccountsSection(t *testing.T) {
	cases := []struct{ doc, key, msg string }{
		{"driver: infinia-nvmeof\n", "accounts", "required"},
		{"accounts: []\n", "accounts", "map"},
		{"accounts: {}\n", "accounts", "no account"},
		{"accounts:\n  clu1/csiAccount: {apis: [https://h], password: x}\n", "accounts.clu1/csiAccount", "<cluster>/<tenant>/<service account>"},
		{"accounts:\n  a/b/c:d: {apis: [https://h], password: x}\n", "accounts.a/b/c:d", "':'"},
		{"accounts:\n  a/b/c: hello\n", "accounts.a/b/c", "map of settings"},
	}
	for _, tc := range cases {
		ps := Validate(parseYAML(t, tc.doc))
		found := false
		for _, p := range ps {
			found = found || (p.Key == tc.key && strings.Contains(p.Msg, tc.msg))
		}
		if !found {
			t.Errorf("%q: want a problem at %s mentioning %q, got %v", tc.doc, tc.key, tc.msg, ps)
		}
	}
}

func TestValidateReportsEveryProblemAtOnce(t *testing.T) {
	doc := "accounts:\n  clu1/red/a: {password: x}\n  clu1/red/b: {apis: [https://h]}\n"
	if ps := Validate(parseYAML(t, doc)); len(ps) != 2 {
		t.Fatalf("want 2 problems (one per account), got %v", ps)
	}
}
