package sanity

import "strings"

// noNodeTrueNAS: as for zfs-generic, the node side needs kernel clients.
const noNodeTrueNAS = noNodeZFS

// sanityTrueNASExtra sets permissions through the API's filesystem jobs
// (numeric owner: the API takes ids).
const sanityTrueNASExtra = `  datasetPermissionsMode: "0777"
  datasetPermissionsUser: 0
  datasetPermissionsGroup: 0
  zvolBlocksize: 16K
`

// truenasReleases are the simulated releases, oldest first.
var truenasReleases = []string{"24.10", "25.04", "25.10", "26.04"}

// truenasDrivers lists the TrueNAS drivers a release supports:
// NVMe-oF from 25.10 only.
func truenasDrivers(release string) []string {
	ds := []string{"freenas-api-nfs", "freenas-api-smb", "freenas-api-iscsi", "freenas-nfs", "freenas-smb", "freenas-iscsi"}
	if release >= "25.10" {
		ds = append(ds, "freenas-api-nvmeof")
	}
	return ds
}

// truenasTargets: every TrueNAS driver on every release where it exists,
// directly and behind one proxy per release holding all of them.
func truenasTargets() []target {
	var ts []target
	short := func(d string) string {
		return strings.TrimPrefix(strings.TrimPrefix(d, "freenas-"), "api-") + map[bool]string{true: "-api", false: "-ssh"}[strings.Contains(d, "-api-")]
	}
	for _, rel := range truenasReleases {
		host := "truenas-" + rel
		tag := strings.ReplaceAll(rel, ".", "")
		for _, d := range truenasDrivers(rel) {
			ts = append(ts, target{name: d + "@" + rel + "/direct", main: "{{" + host + " " + d + " " + short(d) + "-" + tag + "-direct}}", noNode: noNodeTrueNAS})
		}
		for _, d := range truenasDrivers(rel) {
			conns := map[string]string{}
			for _, other := range truenasDrivers(rel) {
				conns["tn-"+short(other)] = "{{" + host + " " + other + " " + short(other) + "-" + tag + "-proxy-" + short(d) + "}}"
			}
			ts = append(ts, target{
				name:        d + "@" + rel + "/proxy",
				main:        "driver: proxy\nproxy:\n  configFolder: {{dir}}/connections\n",
				connections: conns,
				params:      map[string]string{"connection": "tn-" + short(d)},
				noNode:      noNodeTrueNAS,
			})
		}
	}
	// NVMe-oF host access (nvmeof.hostAccess: allowList) behind the proxy.
	ts = append(ts, target{
		name: "freenas-api-nvmeof@25.10/proxy-allowlist",
		main: hostAccessMain,
		connections: map[string]string{
			"tn-nvmeof-api": "{{truenas-25.10 freenas-api-nvmeof nvmeof-api-2510-allowlist allowList}}",
			"tn-nfs-beside": "{{truenas-25.10 freenas-api-nfs nfs-api-2510-allowlist}}",
		},
		params:  map[string]string{"connection": "tn-nvmeof-api"},
		noNode:  noNodeTrueNAS,
		publish: true,
	})
	// iSCSI host access (iscsi.hostAccess: allowList) behind the proxy.
	ts = append(ts, target{
		name: "freenas-api-iscsi@25.10/proxy-allowlist",
		main: hostAccessMain,
		connections: map[string]string{
			"tn-iscsi-api":  "{{truenas-25.10 freenas-api-iscsi iscsi-api-2510-allowlist allowList}}",
			"tn-nfs-beside": "{{truenas-25.10 freenas-api-nfs nfs-api-2510-allowlist-iscsi}}",
		},
		params:  map[string]string{"connection": "tn-iscsi-api"},
		noNode:  noNodeTrueNAS,
		publish: true,
	})
	return ts
}
