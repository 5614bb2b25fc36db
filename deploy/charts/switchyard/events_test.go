package chart_test

import (
	"testing"
)

// TestEventsRBAC: both driver containers know their own Pod (the downward
// API), and their service accounts may create and patch events.k8s.io
// Events in the release's namespace (driver/events); with the node
// strategy only the node's account is bound.
func TestEventsRBAC(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		subjects []string
	}{
		{"deployment", []string{"-f", "testdata/values/minimal.yaml"}, []string{"sy-switchyard-controller", "sy-switchyard-node"}},
		{"node strategy", []string{"-f", "testdata/values/node-strategy.yaml"}, []string{"sy-switchyard-node"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all := docs(t, render(t, tc.args...))
			role := find(t, all, "Role", "-events")
			if g, r, v := strs(get(role, "rules", 0, "apiGroups")), strs(get(role, "rules", 0, "resources")), strs(get(role, "rules", 0, "verbs")); !has(g, "events.k8s.io") || !has(r, "events") || !has(v, "create") || !has(v, "patch") {
				t.Errorf("events Role rules %v", get(role, "rules"))
			}
			var subjects []string
			for _, s := range get(find(t, all, "RoleBinding", "-events"), "subjects").([]any) {
				if s.(obj)["namespace"] != "storage" {
					t.Errorf("subject %v outside the release namespace", s)
				}
				subjects = append(subjects, s.(obj)["name"].(string))
			}
			if len(subjects) != len(tc.subjects) {
				t.Fatalf("subjects %v, want %v", subjects, tc.subjects)
			}
			for _, s := range tc.subjects {
				if !has(subjects, s) {
					t.Errorf("subjects %v lack %s", subjects, s)
				}
			}
			for _, kind := range []string{"Deployment", "DaemonSet"} {
				for _, o := range all {
					if o["kind"] != kind {
						continue
					}
					env := map[string]string{}
					for _, e := range container(t, o, "switchyard")["env"].([]any) {
						if p, ok := get(e, "valueFrom", "fieldRef", "fieldPath").(string); ok {
							env[e.(obj)["name"].(string)] = p
						}
					}
					if env["POD_NAME"] != "metadata.name" || env["POD_NAMESPACE"] != "metadata.namespace" || env["POD_UID"] != "metadata.uid" {
						t.Errorf("%s's driver env %v lacks its own Pod", kind, env)
					}
				}
			}
		})
	}
}
