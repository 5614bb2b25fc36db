package csi

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/config"
)

func TestCapabilityOverride(t *testing.T) {
	base := CapabilitySet{PluginServices: []string{"CONTROLLER_SERVICE"}, Expansion: "ONLINE", Controller: []string{"CREATE_DELETE_VOLUME"}, Node: []string{"STAGE_UNSTAGE_VOLUME"}}
	tests := []struct {
		yaml    string
		check   func(CapabilitySet) bool
		problem string
	}{
		{"", func(c CapabilitySet) bool { return c.Expansion == "ONLINE" && len(c.Controller) == 1 }, ""},
		// democratic-csi's own shape: lists, with UNKNOWN entries.
		{"service:\n  identity:\n    capabilities:\n      service: [UNKNOWN, CONTROLLER_SERVICE]\n      volume_expansion: [OFFLINE]\n  node:\n    capabilities:\n      rpc: [UNKNOWN]\n",
			func(c CapabilitySet) bool {
				return c.Expansion == "OFFLINE" && slices.Equal(c.PluginServices, []string{"CONTROLLER_SERVICE"}) && len(c.Node) == 0
			}, ""},
		{"service:\n  identity:\n    capabilities:\n      volume_expansion: UNKNOWN\n", func(c CapabilitySet) bool { return c.Expansion == "" }, ""},
		{"service:\n  controller:\n    capabilities:\n      rpc: [TELEPORT]\n", nil, "service.controller.capabilities.rpc: unknown controller capability \"TELEPORT\""},
		{"service:\n  node:\n    capabilities:\n      rpc: STAGE_UNSTAGE_VOLUME\n", nil, "service.node.capabilities.rpc: must be a list"},
	}
	for _, tt := range tests {
		tree, _ := config.Parse([]byte(tt.yaml))
		got, ps := base.Override(tree)
		if tt.problem != "" {
			if !strings.Contains(ps.Error(), tt.problem) {
				t.Errorf("%q: problems %q; want %q", tt.yaml, ps.Error(), tt.problem)
			}
			continue
		}
		if len(ps) > 0 || !tt.check(got) {
			t.Errorf("%q: %+v, %v", tt.yaml, got, ps)
		}
	}
}
