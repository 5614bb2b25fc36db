package csi

import (
	"fmt"
	"slices"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/config"
)

// ControllerCaps builds controller capabilities from their CSI names.
func ControllerCaps(names ...string) ([]*csipb.ControllerServiceCapability, error) {
	out := make([]*csipb.ControllerServiceCapability, 0, len(names))
	for _, n := range names {
		v, ok := csipb.ControllerServiceCapability_RPC_Type_value[n]
		if !ok {
			return nil, fmt.Errorf("unknown controller capability %q", n)
		}
		out = append(out, &csipb.ControllerServiceCapability{Type: &csipb.ControllerServiceCapability_Rpc{
			Rpc: &csipb.ControllerServiceCapability_RPC{Type: csipb.ControllerServiceCapability_RPC_Type(v)}}})
	}
	return out, nil
}

// NodeCaps builds node capabilities from their CSI names.
func NodeCaps(names ...string) ([]*csipb.NodeServiceCapability, error) {
	out := make([]*csipb.NodeServiceCapability, 0, len(names))
	for _, n := range names {
		v, ok := csipb.NodeServiceCapability_RPC_Type_value[n]
		if !ok {
			return nil, fmt.Errorf("unknown node capability %q", n)
		}
		out = append(out, &csipb.NodeServiceCapability{Type: &csipb.NodeServiceCapability_Rpc{
			Rpc: &csipb.NodeServiceCapability_RPC{Type: csipb.NodeServiceCapability_RPC_Type(v)}}})
	}
	return out, nil
}

// PluginCaps builds plugin capabilities: service names plus an optional
// volume expansion mode ("ONLINE", "OFFLINE", "" for none).
func PluginCaps(services []string, expansion string) ([]*csipb.PluginCapability, error) {
	var out []*csipb.PluginCapability
	for _, n := range services {
		v, ok := csipb.PluginCapability_Service_Type_value[n]
		if !ok {
			return nil, fmt.Errorf("unknown plugin service capability %q", n)
		}
		out = append(out, ServiceCapability(csipb.PluginCapability_Service_Type(v)))
	}
	if expansion != "" {
		v, ok := csipb.PluginCapability_VolumeExpansion_Type_value[expansion]
		if !ok {
			return nil, fmt.Errorf("unknown volume expansion type %q", expansion)
		}
		out = append(out, &csipb.PluginCapability{Type: &csipb.PluginCapability_VolumeExpansion_{
			VolumeExpansion: &csipb.PluginCapability_VolumeExpansion{Type: csipb.PluginCapability_VolumeExpansion_Type(v)}}})
	}
	return out, nil
}

// CapabilitySet is the capabilities a plugin advertises.
type CapabilitySet struct {
	PluginServices []string
	Expansion      string
	Controller     []string
	Node           []string
}

// Override applies democratic-csi's config overrides (service.identity.
// capabilities.service / .volume_expansion, service.controller.capabilities.rpc,
// service.node.capabilities.rpc) and checks every name.
func (c CapabilitySet) Override(t config.Tree) (CapabilitySet, config.Problems) {
	var ps config.Problems
	list := func(key string, dst *[]string) {
		v, ok := t.Lookup(key)
		if !ok || v == nil {
			return
		}
		items, isList := v.([]any)
		if !isList {
			if _, isString := v.(string); !isString || !strings.HasSuffix(key, "volume_expansion") {
				ps = append(ps, config.Problem{Key: key, Msg: "must be a list of capability names"})
			}
			return
		}
		out := make([]string, 0, len(items))
		for _, it := range items {
			s, _ := it.(string)
			out = append(out, s)
		}
		*dst = out
	}
	list("service.identity.capabilities.service", &c.PluginServices)
	list("service.controller.capabilities.rpc", &c.Controller)
	list("service.node.capabilities.rpc", &c.Node)
	// democratic-csi writes volume_expansion as a list ([ONLINE]); a plain
	// string is accepted too.
	var exp []string
	list("service.identity.capabilities.volume_expansion", &exp)
	if len(exp) > 0 {
		c.Expansion = exp[0]
	} else if v, ok := t.String("service.identity.capabilities.volume_expansion"); ok {
		c.Expansion = v
	}
	// democratic-csi's defaults list UNKNOWN, which advertises nothing.
	for _, l := range []*[]string{&c.PluginServices, &c.Controller, &c.Node} {
		if *l != nil {
			*l = slices.DeleteFunc(*l, func(n string) bool { return n == "UNKNOWN" })
		}
	}
	if c.Expansion == "UNKNOWN" {
		c.Expansion = ""
	}
	if _, err := PluginCaps(c.PluginServices, c.Expansion); err != nil {
		ps = append(ps, config.Problem{Key: "service.identity.capabilities", Msg: err.Error()})
	}
	if _, err := ControllerCaps(c.Controller...); err != nil {
		ps = append(ps, config.Problem{Key: "service.controller.capabilities.rpc", Msg: err.Error()})
	}
	if _, err := NodeCaps(c.Node...); err != nil {
		ps = append(ps, config.Problem{Key: "service.node.capabilities.rpc", Msg: err.Error()})
	}
	return c, ps
}
