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
	// zfs targets reach the simulated ZFS host: {{zfs <driver> <name>}} in
	// a config is replaced by the host's config for that driver.
	zfs bool
	// noNode explains why csi-sanity's Node Service specs cannot run for
	// this target on this machine ("" = they run).
	noNode string
}

var zfsPlaceholder = regexp.MustCompile(`\{\{zfs ([a-z-]+) ([a-z0-9-]+)\}\}`)

func (t target) render(dir string, zfsConfig func(driver, name string) string) (main string, conns map[string]string) {
	sub := func(s string) string {
		s = strings.ReplaceAll(s, "{{dir}}", dir)
		return zfsPlaceholder.ReplaceAllStringFunc(s, func(m string) string {
			g := zfsPlaceholder.FindStringSubmatch(m)
			return zfsConfig(g[1], g[2])
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
}, zfsTargets()...)

func writeTarget(t target, dir string, zfsConfig func(driver, name string) string) (mainFile string, err error) {
	main, conns := t.render(dir, zfsConfig)
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
