package truenas

import (
	"context"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/truenas/api"
	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// Host access for NVMe-oF (nvmeof.hostAccess: allowList): subsystems are
// made with allow_any_host false; ControllerPublishVolume makes the node's
// host NQN an nvmet.host (one per NQN, shared by every subsystem) and
// links it to the subsystem with nvmet.host_subsys; Unpublish deletes the
// link, and the host once no subsystem links it any more.

var _ engine.HostAccess = (*nvmeofShare)(nil)

func (n *nvmeofShare) Initiator() engine.Initiator { return n.s.hostAccess }

type subsysAccess struct {
	ID           int    `json:"id"`
	Name         string `json:"name"`
	AllowAnyHost bool   `json:"allow_any_host"`
}

// ours reads the subsystem recorded on the dataset; found is false when it
// is gone or now belongs to another volume (TrueNAS reuses ids).
func (n *nvmeofShare) ours(ctx context.Context, dataset string, props zfs.Properties) (subsysAccess, bool, error) {
	var s subsysAccess
	id := storedID(props, propNVMeSubsysID)
	if id == 0 {
		return s, false, nil
	}
	err := n.t.call(ctx, &s, "nvmet.subsys.get_instance", id)
	if api.IsNotFound(err) {
		return s, false, nil
	}
	if err != nil {
		return s, false, n.t.statusErr(err, "reading nvmet.subsys "+strconv.Itoa(id))
	}
	if p := props[propNVMeAssets]; p.IsSet() && s.Name != p.Value {
		n.t.log.Warn("NVMe-oF subsystem id recorded on the dataset now belongs to another subsystem", "dataset", dataset, "id", id, "subsystem", s.Name)
		return s, false, nil
	}
	return s, true, nil
}

type nvmetHost struct {
	ID      int    `json:"id"`
	HostNQN string `json:"hostnqn"`
}

type hostLink struct {
	ID     int        `json:"id"`
	Host   *nvmetHost `json:"host"`
	Subsys *struct {
		ID int `json:"id"`
	} `json:"subsys"`
	HostID   int `json:"host_id"`
	SubsysID int `json:"subsys_id"`
}

func (l hostLink) ids() (host, subsys int) {
	host, subsys = l.HostID, l.SubsysID
	if l.Host != nil {
		host = l.Host.ID
	}
	if l.Subsys != nil {
		subsys = l.Subsys.ID
	}
	return host, subsys
}

// findHost looks a host NQN up; found is false when TrueNAS has none.
func (n *nvmeofShare) findHost(ctx context.Context, nqn string) (nvmetHost, bool, error) {
	var list []nvmetHost
	if err := n.t.call(ctx, &list, "nvmet.host.query", []any{[]any{"hostnqn", "=", nqn}}, map[string]any{}); err != nil {
		return nvmetHost{}, false, n.t.statusErr(err, "looking up nvmet.host "+nqn)
	}
	if len(list) == 0 {
		return nvmetHost{}, false, nil
	}
	return list[0], true, nil
}

// links lists every host_subsys association (filtered here: the API's
// entries embed host and subsys rather than their ids).
func (n *nvmeofShare) links(ctx context.Context) ([]hostLink, error) {
	var list []hostLink
	if err := n.t.call(ctx, &list, "nvmet.host_subsys.query", []any{}, map[string]any{}); err != nil {
		return nil, n.t.statusErr(err, "listing nvmet host grants")
	}
	return list, nil
}

// Grant links the node's host NQN to the volume's subsystem, making the
// nvmet.host first if TrueNAS has none for it.
func (n *nvmeofShare) Grant(ctx context.Context, dataset string, props zfs.Properties, nqn string) error {
	if err := n.check(ctx); err != nil {
		return err
	}
	sub, ok, err := n.ours(ctx, dataset, props)
	if err != nil {
		return err
	}
	if !ok {
		return status.Errorf(codes.NotFound, "%s: the NVMe-oF subsystem of %s does not exist on %s (delete the volume, or recreate its subsystem)", n.t.kind.name, dataset, n.t.api.Endpoint())
	}
	if sub.AllowAnyHost {
		return status.Errorf(codes.FailedPrecondition, "%s: NVMe-oF subsystem %s admits every host (allow_any_host: it was made before nvmeof.hostAccess was allowList): turn off \"Allow any host\" on it (Shares > NVMe-oF) once every node using it is published", n.t.kind.name, sub.Name)
	}
	host, ok, err := n.findHost(ctx, nqn)
	if err != nil {
		return err
	}
	dh := n.s.nvmeDHCHAP
	made := false // made here, with the keys
	if !ok {
		fields := map[string]any{"hostnqn": nqn}
		for k, v := range dhchapFields(dh) {
			fields[k] = v
		}
		err := n.t.call(ctx, &host, "nvmet.host.create", fields)
		if err != nil && !api.IsValidation(err) && !api.IsExists(err) {
			return redactKeys(n.t.statusErr(err, "adding NVMe host "+nqn+dhchapHint(dh)), dh)
		}
		made = err == nil
		if err != nil { // made by a concurrent or interrupted call, or refused
			found, ok, ferr := n.findHost(ctx, nqn)
			if ferr != nil {
				return ferr
			}
			if !ok {
				return redactKeys(n.t.statusErr(err, "adding NVMe host "+nqn+dhchapHint(dh)), dh)
			}
			host = found
		}
	}
	if dh.On() && !made {
		// The host existed: (re)set its keys before it is linked, so it
		// never reaches this subsystem unauthenticated.
		if err := n.t.call(ctx, nil, "nvmet.host.update", host.ID, dhchapFields(dh)); err != nil {
			return redactKeys(n.t.statusErr(err, "setting the DH-HMAC-CHAP keys of NVMe host "+nqn+dhchapHint(dh)), dh)
		}
	}
	links, err := n.links(ctx)
	if err != nil {
		return err
	}
	for _, l := range links {
		if h, s := l.ids(); h == host.ID && s == sub.ID {
			return nil
		}
	}
	err = n.t.call(ctx, nil, "nvmet.host_subsys.create", map[string]any{"host_id": host.ID, "subsys_id": sub.ID})
	if err != nil && !api.IsExists(err) {
		return n.t.statusErr(err, "allowing NVMe host "+nqn+" on subsystem "+sub.Name)
	}
	return nil
}

// Revoke deletes the host's link to the subsystem (every link when nqn is
// ""), then each host no subsystem links any more.
func (n *nvmeofShare) Revoke(ctx context.Context, dataset string, props zfs.Properties, nqn string) error {
	if err := n.check(ctx); err != nil {
		return err
	}
	sub, ok, err := n.ours(ctx, dataset, props)
	if err != nil || !ok {
		return err
	}
	links, err := n.links(ctx)
	if err != nil {
		return err
	}
	used := map[int]int{} // host id -> links
	var gone []hostLink
	for _, l := range links {
		h, s := l.ids()
		used[h]++
		if s == sub.ID && (nqn == "" || l.Host != nil && l.Host.HostNQN == nqn) {
			gone = append(gone, l)
		}
	}
	for _, l := range gone {
		if err := n.t.deleteObject(ctx, "nvmet.host_subsys", l.ID); err != nil {
			return err
		}
		h, _ := l.ids()
		if used[h]--; used[h] == 0 {
			// The last grant of this host: remove it (without force, so a
			// grant made meanwhile by another call keeps it).
			if err := n.t.call(ctx, nil, "nvmet.host.delete", h); err != nil && !api.IsNotFound(err) {
				n.t.log.Info("kept an NVMe host that another subsystem now uses", "host_id", h, "error", err)
			}
		}
	}
	return nil
}

// dhchapFields are nvmet.host's DH-HMAC-CHAP fields for the connection's
// keys (TrueNAS 25.10+); none without nvmeof.dhchap.
func dhchapFields(dh engine.DHCHAP) map[string]any {
	if !dh.On() {
		return nil
	}
	f := map[string]any{"dhchap_key": dh.HostKey}
	if dh.CtrlKey != "" {
		f["dhchap_ctrl_key"] = dh.CtrlKey
	}
	return f
}

func dhchapHint(dh engine.DHCHAP) string {
	if !dh.On() {
		return ""
	}
	return " (nvmeof.dhchap needs TrueNAS 25.10 or later)"
}

// redactKeys removes the DH-HMAC-CHAP keys from an error's text, should
// the server have quoted them back.
func redactKeys(err error, dh engine.DHCHAP) error {
	st, ok := status.FromError(err)
	if !ok || !dh.On() {
		return err
	}
	msg := st.Message()
	for _, k := range dh.Secrets() {
		msg = strings.ReplaceAll(msg, k, "<redacted>")
	}
	return status.Error(st.Code(), msg)
}
