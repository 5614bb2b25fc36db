package sanity

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// target is one configuration csi-sanity runs against: a main config
// (driver: <backend> or driver: proxy with connection files) and the
// StorageClass parameters the volumes are made with.
type target struct {
	name        string
	main        string            // main config YAML; {{dir}} is the target's scratch dir
	connections map[string]string // proxy connection files, by name
	params      map[string]string // TestVolumeParameters
	// Configs reach simulated storage hosts through placeholders (see
	// hostPlaceholder), replaced by the host's config for that driver.
	// noNode explains why csi-sanity's Node Service specs cannot run for
	// this target on this machine ("" = they run).
	noNode string
	// block: the backend serves access type block (the restage test then
	// checks it too); publish: it has a controller attach step.
	block, publish bool
	// accessType is csi-sanity's TestVolumeAccessType ("" = mount).
	accessType string
	// nodeSecrets go with NodeStageVolume (SMB credentials).
	nodeSecrets map[string]string
}

// hostPlaceholder is {{<host> <driver> <name>}}: the config of a driver on
// a simulated storage host ("zfs" or "truenas-<release>"). With a fourth
// word, allowList, the block protocol's targets are closed
// (iscsi/nvmeof.hostAccess: allowList; see withAllowList).
var hostPlaceholder = regexp.MustCompile(`\{\{(zfs|infinia|truenas-[0-9.]+) ([a-z-]+) ([a-z0-9-]+)( allowList)?( dhchap)?\}\}`)

// The DH-HMAC-CHAP keys of the sanity connections with a fifth word,
// dhchap (nvmeof.dhchap; nvme gen-dhchap-key format), and the node-stage
// secret that carries them to the node.
const (
	sanityDHCHAPHostKey = "DHHC-1:01:aGhoaGhoaGhoaGhoaGhoaGhoaGhoaGhoaGhoaGhoaGicgrbe:"
	sanityDHCHAPCtrlKey = "DHHC-1:01:Y2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2O1g8Y8:"
)

var dhchapNodeSecrets = map[string]string{"dhchapSecret": sanityDHCHAPHostKey, "dhchapCtrlSecret": sanityDHCHAPCtrlKey}

// withDHCHAP adds nvmeof.dhchap to a config with nvmeof.hostAccess: allowList.
func withDHCHAP(cfg string) string {
	return strings.Replace(cfg, "nvmeof:\n  hostAccess: allowList\n",
		"nvmeof:\n  hostAccess: allowList\n  dhchap:\n    hostKey: '"+sanityDHCHAPHostKey+"'\n    ctrlKey: '"+sanityDHCHAPCtrlKey+"'\n", 1)
}

// withAllowList sets hostAccess: allowList in a block driver's config and
// drops the lab's attributes that open its targets to everyone.
func withAllowList(cfg string) string {
	var out []string
	for _, l := range strings.Split(cfg, "\n") {
		if strings.Contains(l, "generate_node_acls: 1") || strings.Contains(l, "allow_any_host: 1") || strings.Contains(l, "targetGroupInitiatorGroup:") {
			continue
		}
		out = append(out, l)
		if l == "iscsi:" || l == "nvmeof:" {
			out = append(out, "  hostAccess: allowList")
		}
	}
	return strings.Join(out, "\n")
}

// hostConfig renders a placeholder: the host, the driver and a name that
// keeps the target's datasets apart.
type hostConfig func(host, driver, name string) string

func (t target) render(dir string, config hostConfig) (main string, conns map[string]string) {
	sub := func(s string) string {
		s = strings.ReplaceAll(s, "{{dir}}", dir)
		return hostPlaceholder.ReplaceAllStringFunc(s, func(m string) string {
			g := hostPlaceholder.FindStringSubmatch(m)
			if g[4] != "" && g[5] != "" {
				return withDHCHAP(withAllowList(config(g[1], g[2], g[3])))
			}
			if g[4] != "" {
				return withAllowList(config(g[1], g[2], g[3]))
			}
			return config(g[1], g[2], g[3])
		})
	}
	conns = map[string]string{}
	for k, v := range t.connections {
		conns[k] = sub(v)
	}
	return sub(t.main), conns
}

// targets lists every configuration. Later backends add theirs here.
var targets = append([]target{
	{
		name: "local-hostpath/direct",
		main: `driver: local-hostpath
local-hostpath:
  shareBasePath: {{dir}}/hostpath
  controllerBasePath: {{dir}}/hostpath
  dirPermissionsMode: "0777"
`,
	},
	{
		name: "local-hostpath/proxy",
		main: `driver: proxy
proxy:
  configFolder: {{dir}}/connections
  nodeTopology:
    type: node
`,
		// Two connections, so listing and routing cross connection files;
		// the second's long name still fits the 64-byte ids in 128 bytes.
		connections: map[string]string{
			"hostpath-a": `driver: local-hostpath
local-hostpath:
  shareBasePath: {{dir}}/a
  controllerBasePath: {{dir}}/a
`,
			"hostpath-with-a-rather-long-connection-name": `driver: local-hostpath
local-hostpath:
  shareBasePath: {{dir}}/b
  controllerBasePath: {{dir}}/b
`,
		},
		params: map[string]string{"connection": "hostpath-a"},
	},
}, append(append(zfsTargets(), truenasTargets()...), infiniaTargets()...)...)

func writeTarget(t target, dir string, config hostConfig) (mainFile string, err error) {
	main, conns := t.render(dir, config)
	if len(conns) > 0 {
		if err := os.MkdirAll(filepath.Join(dir, "connections"), 0o755); err != nil {
			return "", err
		}
	}
	for name, content := range conns {
		if err := os.WriteFile(filepath.Join(dir, "connections", name+".yaml"), []byte(content), 0o600); err != nil {
			return "", fmt.Errorf("connection %s: %w", name, err)
		}
	}
	mainFile = filepath.Join(dir, "main.yaml")
	return mainFile, os.WriteFile(mainFile, []byte(main), 0o600)
}
