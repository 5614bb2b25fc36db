package node

import (
	"maps"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// The volume_context keys and their meaning are driver/volumecontext's:
// attachers read their kind through it (decode) and report its errors with
// invalidContext.

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
	if volumecontext.AttachDriver(vc) != "" || volumecontext.AttachDriver(pc) == "" {
		return vc, ""
	}
	out := make(map[string]string, len(vc)+len(pc))
	maps.Copy(out, vc)
	maps.Copy(out, pc)
	return out, contextFromPublish
}

// invalidContext is a volumecontext decode error as INVALID_ARGUMENT naming
// the volume (the error names the key).
func invalidContext(v *Volume, err error) error {
	return status.Errorf(codes.InvalidArgument, "volume %s: %v", v.ID, err)
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
	var prov volumecontext.Provisioner
	_ = prov.Decode(v.Context) // never fails: both keys are optional
	if prov.Driver != "" {
		scopes = append(scopes, prov.Driver+"/")
	}
	if prov.InstanceID != "" {
		scopes = append(scopes, prov.InstanceID+"/")
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
