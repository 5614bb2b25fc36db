package chart_test

import (
	"strings"
	"testing"
)

// TestSecretAccess: controller.secretAccess is off by default (no Role
// anywhere mentions Secrets); on, a Role in the configured namespace (the
// release's by default) allows only `get` on Secrets, only the named ones
// when names are given, bound to the service account the controller's
// sidecars run as (the node plugin's with strategy node). Bad values are
// refused by the schema, naming the key.
func TestSecretAccess(t *testing.T) {
	for _, args := range [][]string{{"-f", "testdata/values/minimal.yaml"}, {"-f", "testdata/values/full.yaml"}, {"-f", "testdata/values/node-strategy.yaml"}} {
		for _, o := range docs(t, render(t, args...)) {
			if o["kind"] != "Role" && o["kind"] != "ClusterRole" {
				continue
			}
			rules, _ := get(o, "rules").([]any)
			for _, r := range rules {
				if has(optStrs(get(r, "resources")), "secrets") {
					t.Errorf("%v: %s %v grants Secret access by default: %v", args, o["kind"], get(o, "metadata", "name"), r)
				}
			}
		}
	}
	for _, tc := range []struct {
		name      string
		args      []string
		namespace string
		names     []string
		subject   string
	}{
		{"release namespace, every secret", []string{"--set", "controller.secretAccess.enabled=true"}, "storage", nil, "sy-switchyard-controller"},
		{"another namespace, named secrets", []string{"--set", "controller.secretAccess.enabled=true", "--set", "controller.secretAccess.namespace=tenant-a",
			"--set", "controller.secretAccess.names={zfs-key,zfs-key-2}"}, "tenant-a", []string{"zfs-key", "zfs-key-2"}, "sy-switchyard-controller"},
		{"node strategy", []string{"-f", "testdata/values/node-strategy.yaml", "--set", "controller.secretAccess.enabled=true"}, "storage", nil, "sy-switchyard-node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-f", "testdata/values/minimal.yaml"}, tc.args...)
			all := docs(t, render(t, args...))
			role := find(t, all, "Role", "-secrets")
			if ns := get(role, "metadata", "namespace"); ns != tc.namespace {
				t.Errorf("Role in namespace %v, want %s", ns, tc.namespace)
			}
			rules := get(role, "rules").([]any)
			if len(rules) != 1 {
				t.Fatalf("rules %v, want one", rules)
			}
			if g, r, v := strs(get(rules[0], "apiGroups")), strs(get(rules[0], "resources")), strs(get(rules[0], "verbs")); len(g) != 1 || g[0] != "" || len(r) != 1 || r[0] != "secrets" || len(v) != 1 || v[0] != "get" {
				t.Errorf("rule %v, want get on core secrets only", rules[0])
			}
			if got := optStrs(get(rules[0], "resourceNames")); strings.Join(got, ",") != strings.Join(tc.names, ",") {
				t.Errorf("resourceNames %v, want %v", got, tc.names)
			}
			rb := find(t, all, "RoleBinding", "-secrets")
			if ns := get(rb, "metadata", "namespace"); ns != tc.namespace {
				t.Errorf("RoleBinding in namespace %v, want %s", ns, tc.namespace)
			}
			if ref := get(rb, "roleRef", "name"); ref != get(role, "metadata", "name") {
				t.Errorf("RoleBinding refers to %v", ref)
			}
			subjects := get(rb, "subjects").([]any)
			if len(subjects) != 1 || get(subjects[0], "name") != tc.subject || get(subjects[0], "namespace") != "storage" {
				t.Errorf("subjects %v, want %s in the release namespace", subjects, tc.subject)
			}
			// The account bound is the one the provisioner and attacher run as.
			kind := "Deployment"
			if strings.Contains(tc.name, "node") {
				kind = "DaemonSet"
			}
			for _, o := range all {
				if o["kind"] == kind && get(o, "spec", "template", "spec", "serviceAccountName") != tc.subject {
					t.Errorf("%s runs as %v, not the bound %s", kind, get(o, "spec", "template", "spec", "serviceAccountName"), tc.subject)
				}
			}
		})
	}
	for _, bad := range []struct{ set, key string }{
		{"controller.secretAccess.namespace=Not_A_Namespace", "namespace"},
		{"controller.secretAccess.enabled=yes-please", "enabled"},
		{"controller.secretAccess.nmaes={a}", "nmaes"},
	} {
		out, err := helm(t, "template", release, ".", "--kube-version", kubeVersion, "-f", "testdata/values/minimal.yaml", "--set", bad.set)
		if err == nil || !strings.Contains(err.Error(), bad.key) {
			t.Errorf("--set %s: %v\n%s", bad.set, err, out)
		}
	}
}

// optStrs is strs of a list that may be absent (nil: none).
func optStrs(v any) []string {
	if v == nil {
		return nil
	}
	return strs(v)
}
