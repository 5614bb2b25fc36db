package truenas

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/truenas/api"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// nvmeofShare exports zvols through TrueNAS's NVMe-oF target (25.10+): a
// subsystem per volume with the zvol as namespace 1, linked to the ports.
type nvmeofShare struct {
	t *truenas
	s shareSettings

	mu      sync.Mutex
	basenqn string
}

// NQNs are 11 to 223 bytes (NVMe base specification).
const maxNQN = 223

func (n *nvmeofShare) AssetProps() []string {
	return []string{propNVMeSubsysID, propNVMeNamespace, propNVMeAssets}
}

// check refuses servers without the nvmet API, naming both versions.
func (n *nvmeofShare) check(ctx context.Context) error {
	v, err := n.t.version(ctx)
	if err != nil {
		return err
	}
	if !v.AtLeast(25, 10, 0) {
		return status.Errorf(codes.FailedPrecondition, "%s needs TrueNAS 25.10 or newer (its NVMe-oF target API, nvmet.*); %s runs %s", n.t.kind.name, n.t.api.Endpoint(), v.String())
	}
	return nil
}

func (n *nvmeofShare) globalNQN(ctx context.Context) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.basenqn != "" {
		return n.basenqn, nil
	}
	var g struct {
		Basenqn string `json:"basenqn"`
	}
	if err := n.t.call(ctx, &g, "nvmet.global.config"); err != nil {
		return "", n.t.statusErr(err, "reading nvmet.global")
	}
	n.basenqn = g.Basenqn
	return g.Basenqn, nil
}

type subsys struct {
	ID     int    `json:"id"`
	Name   string `json:"name"`
	Subnqn string `json:"subnqn"`
}

type namespace struct {
	ID         int    `json:"id"`
	Nsid       int    `json:"nsid"`
	DevicePath string `json:"device_path"`
	DeviceUUID string `json:"device_uuid"`
	SubsysID   int    `json:"subsys_id"`
	Subsys     *struct {
		ID int `json:"id"`
	} `json:"subsys"`
}

func (ns namespace) subsysID() int {
	if ns.Subsys != nil {
		return ns.Subsys.ID
	}
	return ns.SubsysID
}

func (n *nvmeofShare) Create(ctx context.Context, r engine.ShareRequest) (map[string]string, []zfs.Prop, error) {
	if err := n.check(ctx); err != nil {
		return nil, nil, err
	}
	name := assetName(n.s, r)
	if err := checkAssetName("nvmeof", name, maxNQN); err != nil {
		return nil, nil, err
	}
	base, err := n.globalNQN(ctx)
	if err != nil {
		return nil, nil, err
	}
	if nqn := base + ":" + name; len(nqn) > maxNQN {
		return nil, nil, status.Errorf(codes.FailedPrecondition, "NQN %s is %d bytes; the limit is %d: shorten nvmeof.namePrefix/nameSuffix/nameTemplate or the TrueNAS basenqn", nqn, len(nqn), maxNQN)
	}
	sub, fresh, err := n.subsystem(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	ns, err := n.namespace(ctx, sub.ID, "zvol/"+r.Dataset)
	if err != nil {
		return nil, nil, err
	}
	if err := n.link(ctx, sub.ID, fresh); err != nil {
		return nil, nil, err
	}
	nqn := sub.Subnqn
	if nqn == "" {
		nqn = base + ":" + name
	}
	vc := volumecontext.NVMeoF{Transport: n.s.nvmeTransports[0], Transports: n.s.nvmeTransports, NQN: nqn,
		NSID: uint32(max(ns.Nsid, 1)), DeviceUUID: ns.DeviceUUID, DHCHAP: n.s.nvmeDHCHAP.On()}.Encode()
	return vc, []zfs.Prop{idProp(propNVMeSubsysID, sub.ID), idProp(propNVMeNamespace, ns.ID), {Name: propNVMeAssets, Value: name}}, nil
}

// subsystem makes the volume's subsystem or finds the one an earlier call
// made; fresh says this call made it, so it has no port links yet.
func (n *nvmeofShare) subsystem(ctx context.Context, name string) (sub subsys, fresh bool, err error) {
	var made subsys
	err = n.t.call(ctx, &made, "nvmet.subsys.create", withFields(n.s.nvmeSubsysFields, map[string]any{"name": name, "allow_any_host": n.s.nvmeAllowAnyHost}))
	if err == nil {
		return made, true, nil
	}
	if !api.IsValidation(err) && !api.IsExists(err) {
		return made, false, n.t.statusErr(err, "creating NVMe-oF subsystem "+name)
	}
	var list []subsys
	if qerr := n.t.call(ctx, &list, "nvmet.subsys.query", []any{[]any{"name", "=", name}}, map[string]any{}); qerr != nil {
		// The lookup's error, not the create's "already exists": that one
		// is INVALID_ARGUMENT, which ends the CO's retries and leaks the
		// subsystem an earlier call made.
		return made, false, n.t.statusErr(qerr, "looking up NVMe-oF subsystem "+name)
	} else if len(list) == 0 {
		return made, false, n.t.statusErr(err, "creating NVMe-oF subsystem "+name)
	}
	return list[0], false, nil
}

func (n *nvmeofShare) namespace(ctx context.Context, subsysID int, device string) (namespace, error) {
	var made namespace
	err := n.t.call(ctx, &made, "nvmet.namespace.create", withFields(n.s.nvmeNSFields, map[string]any{"subsys_id": subsysID, "device_type": "ZVOL", "device_path": device}))
	if err == nil {
		return made, nil
	}
	if !api.IsValidation(err) && !api.IsExists(err) {
		return made, n.t.statusErr(err, "adding "+device+" to the NVMe-oF subsystem")
	}
	var list []namespace
	if qerr := n.t.call(ctx, &list, "nvmet.namespace.query", []any{[]any{"device_path", "=", device}}, map[string]any{}); qerr != nil {
		return made, n.t.statusErr(qerr, "looking up nvmet.namespace")
	}
	for _, ns := range list {
		if ns.subsysID() == subsysID {
			return ns, nil
		}
	}
	return made, n.t.statusErr(err, "adding "+device+" to the NVMe-oF subsystem")
}

// link attaches the subsystem to the configured ports (default: every
// TCP port); an existing link is fine. A fresh subsystem (made by this
// call) has no links, so they are not listed: nvmet.port_subsys.query
// returns every link of the system, one per volume and port, which made
// each CreateVolume read the whole table (an O(volumes) reply, and one of
// 5 API calls a create made).
func (n *nvmeofShare) link(ctx context.Context, subsysID int, fresh bool) error {
	ports := n.s.nvmePorts
	if len(ports) == 0 {
		var list []struct {
			ID     int    `json:"id"`
			Trtype string `json:"addr_trtype"`
		}
		if err := n.t.call(ctx, &list, "nvmet.port.query", []any{}, map[string]any{}); err != nil {
			return n.t.statusErr(err, "listing nvmet ports")
		}
		for _, p := range list {
			if strings.EqualFold(p.Trtype, "TCP") {
				ports = append(ports, p.ID)
			}
		}
		if len(ports) == 0 {
			return status.Errorf(codes.FailedPrecondition, "%s: %s has no NVMe-oF TCP port: add one (Shares > NVMe-oF > Ports) or set nvmeof.portIds", n.t.kind.name, n.t.api.Endpoint())
		}
	}
	var links []struct {
		PortID   int `json:"port_id"`
		SubsysID int `json:"subsys_id"`
		Port     *struct {
			ID int `json:"id"`
		} `json:"port"`
		Subsys *struct {
			ID int `json:"id"`
		} `json:"subsys"`
	}
	if fresh {
		links = nil
	} else if err := n.t.call(ctx, &links, "nvmet.port_subsys.query", []any{}, map[string]any{}); err != nil {
		return n.t.statusErr(err, "listing nvmet port links")
	}
	have := map[int]bool{}
	for _, l := range links {
		sid, pid := l.SubsysID, l.PortID
		if l.Subsys != nil {
			sid = l.Subsys.ID
		}
		if l.Port != nil {
			pid = l.Port.ID
		}
		if sid == subsysID {
			have[pid] = true
		}
	}
	for _, p := range ports {
		if have[p] {
			continue
		}
		err := n.t.call(ctx, nil, "nvmet.port_subsys.create", map[string]any{"port_id": p, "subsys_id": subsysID})
		if err != nil && !api.IsExists(err) {
			return n.t.statusErr(err, "linking the subsystem to nvmet port "+strconv.Itoa(p))
		}
	}
	return nil
}

// Remove deletes the subsystem (with its namespace and port links) when
// it still carries this volume's name.
func (n *nvmeofShare) Remove(ctx context.Context, dataset string, props zfs.Properties) error {
	id := storedID(props, propNVMeSubsysID)
	if id == 0 {
		return nil
	}
	if n.s.hostAccess != engine.OpenTargets {
		// The subsystem's grants go with it; its hosts go when nothing
		// else links them.
		if err := n.Revoke(ctx, dataset, props, ""); err != nil {
			return err
		}
	}
	var s subsys
	err := n.t.call(ctx, &s, "nvmet.subsys.get_instance", id)
	if api.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return n.t.statusErr(err, "reading nvmet.subsys")
	}
	if p := props[propNVMeAssets]; p.IsSet() && s.Name != p.Value {
		n.t.log.Warn("NVMe-oF subsystem id recorded on the dataset now belongs to another subsystem; leaving it", "dataset", dataset, "id", id, "subsystem", s.Name)
		return nil
	}
	return n.t.deleteObject(ctx, "nvmet.subsys", id, map[string]any{"force": true})
}
