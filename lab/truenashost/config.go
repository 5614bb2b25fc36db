package truenashost

import (
	"fmt"
	"strings"
)

// DriverConfig is a complete config for this host: driver is one of the
// freenas-api-* / freenas-* (or truenas-*) drivers; volumes go under
// tank/k8s/<name> and detached snapshots under tank/k8s/<name>-snapshots.
// zfsExtra (YAML indented by two spaces) is added to the zfs section.
func (h *Host) DriverConfig(driver, name, zfsExtra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "driver: %s\nhttpConnection:\n  protocol: %s\n  host: %s\n  port: %d\n  username: %s\n  apiKey: %s\n",
		driver, h.Protocol, h.Host, h.Port, h.User, h.APIKey)
	if len(h.CertPEM) > 0 {
		b.WriteString("  caCert: |\n")
		for _, line := range strings.Split(strings.TrimSpace(string(h.CertPEM)), "\n") {
			b.WriteString("    " + line + "\n")
		}
	}
	if !strings.Contains(driver, "-api-") { // freenas-nfs & co.: zfs over SSH
		fmt.Fprintf(&b, "sshConnection:\n  host: %s\n  port: %d\n  username: %s\n  password: %s\n", h.Host, h.SSHPort, h.User, h.Password)
	}
	fmt.Fprintf(&b, `zfs:
  datasetParentName: %[1]s/k8s/%[2]s
  detachedSnapshotsDatasetParentName: %[1]s/k8s/%[2]s-snapshots
  datasetEnableQuotas: true
`, h.Pool, name)
	b.WriteString(zfsExtra)
	switch {
	case strings.HasSuffix(driver, "-nfs"):
		b.WriteString("nfs:\n  shareHost: 127.0.0.1\n  shareAllowedNetworks: []\n")
	case strings.HasSuffix(driver, "-smb"):
		b.WriteString("smb:\n  shareHost: 127.0.0.1\n")
	case strings.HasSuffix(driver, "-iscsi"):
		b.WriteString(`iscsi:
  targetPortal: 127.0.0.1:3260
  targetGroups:
    - targetGroupPortalGroup: 1
      targetGroupInitiatorGroup: 1
      targetGroupAuthType: None
`)
	case strings.HasSuffix(driver, "-nvmeof"):
		b.WriteString("nvmeof:\n  transports:\n    - tcp://127.0.0.1:4420\n")
	}
	return b.String()
}
