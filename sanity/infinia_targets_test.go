package sanity

import (
	"fmt"
	"path/filepath"

	"github.com/switchyard-csi/switchyard/lab/infiniahost"
	"github.com/switchyard-csi/switchyard/simulators/infinia"
)

// noNodeInfinia is why Infinia's node specs do not run on this host.
const noNodeInfinia = "node specs need an NVMe/TCP host (nvme-tcp): the host kernel has none (no modules); the storage VM tier runs them"

// infiniaCaps is what a proxy holding Infinia connections advertises:
// PUBLISH_UNPUBLISH_VOLUME (host NQN grants), no snapshots (Infinia's CSI
// driver offers none).
const infiniaCaps = `service:
  controller:
    capabilities:
      rpc: [CREATE_DELETE_VOLUME, PUBLISH_UNPUBLISH_VOLUME, LIST_VOLUMES, GET_CAPACITY, EXPAND_VOLUME, SINGLE_NODE_MULTI_WRITER, GET_VOLUME]
`

// infiniaTargets: the driver standalone with switchyard's config, with
// DDN's own file (no driver key), and behind the proxy. Each target has its
// own tenant and account, so listings never mix.
func infiniaTargets() []target {
	params := map[string]string{"service": infinia.DefaultSubtenant + "/" + infinia.DefaultService}
	withConn := map[string]string{"connection": "infinia", "service": params["service"]}
	return []target{
		{name: "infinia-nvmeof/direct", main: "{{infinia infinia-nvmeof direct}}", params: params, noNode: noNodeInfinia, block: true, publish: true},
		{name: "infinia-nvmeof/ddn-file", main: "{{infinia ddn ddnfile}}", params: params, noNode: noNodeInfinia, block: true, publish: true},
		{
			name:        "infinia-nvmeof/proxy",
			main:        "driver: proxy\nproxy:\n  configFolder: {{dir}}/connections\n  nodeId:\n    parts:\n      nqn: true\n" + infiniaCaps,
			connections: map[string]string{"infinia": "{{infinia infinia-nvmeof proxy}}"},
			params:      withConn, noNode: noNodeInfinia, block: true, publish: true,
		},
	}
}

// infiniaConfig starts the simulated Infinia once, gives name its own
// tenant (subtenant red, service csiService) and account, and returns the
// driver config for it (DDN's file without `driver:` for driver "ddn").
func (h *simHosts) infiniaConfig(driver, name string) (string, error) {
	if h.infinia == nil {
		ih, err := infiniahost.Start(bgCtx, infiniahost.Options{Dir: filepath.Join(h.base, "infinia"), Target: h.infiniaTarget})
		if err != nil {
			return "", err
		}
		h.infinia = ih
	}
	srv := h.infinia.Server
	tenant := "t-" + name
	err := srv.AddTenant(infinia.DefaultCluster, infinia.TenantSeed{Name: tenant, Subtenants: []infinia.SubtenantSeed{{
		Name: infinia.DefaultSubtenant, Services: []infinia.ServiceSeed{{Name: infinia.DefaultService}}}}})
	if err != nil {
		return "", err
	}
	acct := infinia.Account{Level: infinia.DefaultCluster + "/" + tenant, User: infinia.DefaultUser, Password: infinia.DefaultPassword}
	if err := srv.AddAccount(acct); err != nil {
		return "", err
	}
	accounts := map[string]any{h.infinia.Account: nil, acct.Key(): map[string]any{
		"apis": []any{h.infinia.URL}, "password": acct.Password, "insecureSkipVerify": true,
		"default_instance_ids": []any{1, 2, 3}, "default_data_port": infinia.DefaultPort,
	}}
	cfg := string(h.infinia.DriverConfig(name, map[string]any{"accounts": accounts}))
	if driver == "ddn" {
		return stripDriverLine(cfg), nil
	}
	if driver != "infinia-nvmeof" {
		return "", fmt.Errorf("infinia host: unknown driver %q", driver)
	}
	return cfg, nil
}
