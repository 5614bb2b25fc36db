package node

import (
	"maps"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// volume_context keys read by the attachers: democratic-csi's, so volumes it
// made attach unchanged (docs/migrating-from-democratic-csi.md).
const (
	KeyServer     = "server"     // nfs, smb, lustre
	KeyShare      = "share"      // nfs, smb, lustre
	KeyPortal     = "portal"     // iscsi
	KeyPortals    = "portals"    // iscsi, csv
	KeyIQN        = "iqn"        // iscsi
	KeyLUN        = "lun"        // iscsi
	KeyInterface  = "interface"  // iscsi (an iscsiadm iface record)
	KeyTransport  = "transport"  // nvmeof, tcp://host:port[?args]
	KeyTransports = "transports" // nvmeof, csv
	KeyNQN        = "nqn"        // nvmeof
	KeyNSID       = "nsid"       // nvmeof
	KeyUUID       = "uuid"       // nvmeof namespace uuid (Infinia)
	KeyZFSAsset   = "zfs_asset_name"
	// Applied to a block volume's filesystem root after its first format
	// (Infinia StorageClass parameters).
	KeyOwnerUID = "owneruid"
	KeyGroupUID = "groupuid"
	KeyPerms    = "perms"
)

// SecretMountFlags is the secret key holding extra mount flags (csv).
const SecretMountFlags = "mount_flags"

// contextFromPublish records that a volume's attach keys came from
// publish_context (a static PV, e.g. Infinia's).
const contextFromPublish = "publish_context"

// attachContext returns the keys an attacher reads: the volume_context, or,
// when it lacks node_attach_driver but publish_context has it (a static PV
// whose ControllerPublishVolume returns the attach keys, as Infinia does),
// publish_context's keys over the volume_context. from names the source
// when it is publish_context.
func attachContext(vc, pc map[string]string) (ctx map[string]string, from string) {
	if vc[KeyAttachDriver] != "" || pc[KeyAttachDriver] == "" {
		return vc, ""
	}
	out := make(map[string]string, len(vc)+len(pc))
	maps.Copy(out, vc)
	maps.Copy(out, pc)
	return out, contextFromPublish
}

// required returns a volume_context value or INVALID_ARGUMENT naming the key.
func required(v *Volume, key string) (string, error) {
	val := strings.TrimSpace(v.Context[key])
	if val == "" {
		return "", status.Errorf(codes.InvalidArgument,
			"volume %s: volume_context key %q is missing: node_attach_driver %s needs it", v.ID, key, v.Context[KeyAttachDriver])
	}
	return val, nil
}

// csv splits a comma-separated value into trimmed, non-empty, unique items,
// keeping their order.
func csv(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// secretPrefix is democratic-csi's namespace for secret keys: a key may be
// written "democratic-csi.org/[<driver or instance id>/]<key>".
const secretPrefix = "democratic-csi.org/"

// normalizedSecrets strips democratic-csi's key prefixes, the most specific
// winning: an instance-id key over a driver key over a generic prefixed key
// over a plain one.
func normalizedSecrets(v *Volume) map[string]string {
	out := make(map[string]string, len(v.Secrets))
	maps.Copy(out, v.Secrets)
	scopes := []string{""}
	if d := v.Context["provisioner_driver"]; d != "" {
		scopes = append(scopes, d+"/")
	}
	if id := v.Context["provisioner_driver_instance_id"]; id != "" {
		scopes = append(scopes, id+"/")
	}
	for _, scope := range scopes {
		p := secretPrefix + scope
		for k, val := range v.Secrets {
			if rest, ok := strings.CutPrefix(k, p); ok && rest != "" && (scope != "" || !strings.Contains(rest, "/")) {
				out[rest] = val
			}
		}
	}
	for k := range v.Secrets {
		if strings.HasPrefix(k, secretPrefix) {
			delete(out, k)
		}
	}
	return out
}
