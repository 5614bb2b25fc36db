package infiniahost

import (
	"bytes"
	"fmt"

	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/switchyard-csi/switchyard/simulators/infinia"
)

// driverName is switchyard's driver type for Infinia.
const driverName = "infinia-nvmeof"

// DDNConfig is the host's config in the format of DDN's driver
// (red-csi-driver-block-config.yaml): one account with the API URL, the
// password, insecureSkipVerify, the default instances and data port.
func (h *Host) DDNConfig() []byte {
	return marshal(h.ddn())
}

func (h *Host) ddn() map[string]any {
	return map[string]any{"accounts": map[string]any{h.Account: map[string]any{
		"apis":                 []any{h.URL},
		"password":             h.Password,
		"insecureSkipVerify":   true,
		"default_instance_ids": []any{1, 2, 3},
		"default_data_port":    infinia.DefaultPort,
	}}}
}

// DriverConfig is a switchyard config for the host: `driver:
// infinia-nvmeof` followed by DDNConfig with extra deep-merged into it at
// the top level (maps merge key by key, anything else replaces, a nil
// value removes the key), e.g.
//
//	{"accounts": {h.Account: {"zone": "zone-a", "insecureSkipVerify": false, "caCert": string(h.CertPEM)}}}
//
// name only labels the file (a comment on its first line), e.g. the
// proxy connection it is written for. extra must be JSON-encodable: a
// value that is not (a func, a channel) is a programming error and
// panics.
func (h *Host) DriverConfig(name string, extra map[string]any) []byte {
	cfg := h.ddn()
	merge(cfg, extra)
	driver := any(driverName)
	if d, ok := cfg["driver"]; ok { // extra may name another driver (tests of bad configs)
		driver = d
		delete(cfg, "driver")
	}
	head := marshal(map[string]any{"driver": driver})
	if name != "" {
		head = append([]byte(fmt.Sprintf("# %s: switchyard lab Infinia simulator at %s\n", name, h.URL)), head...)
	}
	return append(head, marshal(cfg)...)
}

// merge deep-merges src into dst.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		sm, sok := v.(map[string]any)
		dm, dok := dst[k].(map[string]any)
		if sok && dok {
			merge(dm, sm)
			continue
		}
		if sok { // copy, so that later merges never write into the caller's map
			cp := map[string]any{}
			merge(cp, sm)
			v = cp
		}
		dst[k] = v
	}
}

// marshal renders a config.
func marshal(v map[string]any) []byte {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2) // as DDN's example file
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("infiniahost: encoding a config: %v", err))
	}
	enc.Close()
	return b.Bytes()
}
