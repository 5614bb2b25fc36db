package infinia

import (
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// StorageClass (and PV volumeAttributes) parameters, DDN's names.
const (
	paramAccount   = "account"
	paramService   = "service"
	paramInstances = "instances"
	paramDataPort  = "dataport"
	paramOwner     = "owneruid"
	paramGroup     = "groupuid"
	paramPerms     = "perms"
)

// volParams is what a CreateVolume's parameters ask for, with the
// account's defaults filled in.
type volParams struct {
	acct                *account
	subtenant, service  string
	instances           []int // nil: the service's own instances
	dataPort            int
	owner, group, perms string
}

func invalidParam(name, format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, "parameter "+name+": "+format, args...)
}

// pickAccount resolves the account parameter: required unless exactly one
// account is configured.
func (d *Driver) pickAccount(set *accountSet, params map[string]string) (*account, error) {
	key := strings.TrimSpace(params[paramAccount])
	if key == "" {
		if len(set.keys) == 1 {
			return set.byKey[set.keys[0]], nil
		}
		return nil, invalidParam(paramAccount, "required: %d accounts are configured (%s); name one as <cluster>/<tenant>/<account>",
			len(set.keys), strings.Join(set.keys, ", "))
	}
	a, ok := set.byKey[key]
	if !ok {
		return nil, invalidParam(paramAccount, "%q is not configured in %s (configured: %s)", key, d.fileName(), strings.Join(set.keys, ", "))
	}
	return a, nil
}

// parseService reads service=<subtenant>/<service>.
func parseService(params map[string]string) (sub, svc string, err error) {
	v := strings.TrimSpace(params[paramService])
	if v == "" {
		return "", "", invalidParam(paramService, "required: the Infinia service as <subtenant>/<service>, e.g. red/csiService")
	}
	sub, svc, ok := strings.Cut(v, "/")
	if !ok || !pathNameOK(sub) || !pathNameOK(svc) || strings.Contains(svc, "/") {
		return "", "", invalidParam(paramService, "%q must be <subtenant>/<service>, e.g. red/csiService", v)
	}
	return sub, svc, nil
}

// parseParams reads every parameter CreateVolume uses. Unknown parameters
// (csi.storage.k8s.io/*, the proxy's connection) are ignored.
func (d *Driver) parseParams(set *accountSet, params map[string]string) (volParams, error) {
	a, err := d.pickAccount(set, params)
	if err != nil {
		return volParams{}, err
	}
	p := volParams{acct: a, instances: a.instances, dataPort: a.dataPort, owner: a.owner, group: a.group, perms: a.perms}
	if p.subtenant, p.service, err = parseService(params); err != nil {
		return volParams{}, err
	}
	if v := strings.TrimSpace(params[paramInstances]); v != "" {
		p.instances = nil
		for item := range strings.SplitSeq(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(item))
			if err != nil || n < 1 {
				return volParams{}, invalidParam(paramInstances, "%q must be a comma-separated list of instance ids, e.g. \"1,2,3\" (bad entry %q)", v, item)
			}
			p.instances = append(p.instances, n)
		}
	}
	if v := strings.TrimSpace(params[paramDataPort]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			return volParams{}, invalidParam(paramDataPort, "%q must be a TCP port (1-65535)", v)
		}
		p.dataPort = n
	}
	_, ownerSet := params[paramOwner]
	_, groupSet := params[paramGroup]
	if ownerSet || groupSet {
		// Parameters replace the account's pair as a whole: mixing one
		// from each would make an owner nobody asked for.
		p.owner, p.group = strings.TrimSpace(params[paramOwner]), strings.TrimSpace(params[paramGroup])
		if key, why := checkIDs(p.owner, p.group); why != "" {
			return volParams{}, invalidParam(key, "%s", why)
		}
	}
	if v, ok := params[paramPerms]; ok {
		if why := checkPerms(v); why != "" {
			return volParams{}, invalidParam(paramPerms, "%s", why)
		}
		p.perms = strings.TrimSpace(v)
	}
	return p, nil
}
