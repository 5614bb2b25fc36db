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

// Host access for iSCSI (iscsi.hostAccess: allowList). A TrueNAS target's
// groups[] entries each name a portal, an optional initiator group
// (iscsi.initiator) and auth. Both of TrueNAS's iSCSI back ends read them
// alike (middleware etc_files/scst.conf.mako, utils/lio/config.py):
//   - a group without an initiator group, or whose group's initiators list
//     is empty (stored as "ALL", shown as "Allow All initiators"), admits
//     every initiator (SCST: INITIATOR *; LIO: generate_node_acls);
//   - a target without any group admits nobody: SCST writes no INITIATOR
//     into the security group that holds the target's LUNs, LIO makes no
//     TPG at all. The API accepts such a target (kept for API 1.0).
//
// So a closed target is a target without groups. Targets are made so;
// the first grant makes an initiator group of the target's own (comment
// "switchyard: <target name>") holding the node's IQN and gives the target
// the configured groups (portal and auth from iscsi.targetGroups) naming
// it; later grants and revokes edit its list; the last revoke takes the
// groups off the target first and then deletes the initiator group, so a
// target never names an empty (allow-all) group. DeleteVolume deletes the
// target, then its group (deleting the group first would null the
// target's reference: open). A placeholder IQN in an otherwise empty list
// would be closed too, but only while no initiator takes that name.

var _ engine.HostAccess = (*iscsiShare)(nil)

func (i *iscsiShare) Initiator() engine.Initiator { return i.s.hostAccess }

type iscsiTarget struct {
	ID     int           `json:"id"`
	Name   string        `json:"name"`
	Groups []targetGroup `json:"groups"`
}

type initiatorGroup struct {
	ID         int      `json:"id"`
	Initiators []string `json:"initiators"`
	Comment    string   `json:"comment"`
}

// initiatorComment marks the initiator group of a target as the driver's
// (target names are unique on a TrueNAS).
func initiatorComment(target string) string { return "switchyard: " + target }

// target reads a target by id; found is false when it is gone.
func (i *iscsiShare) target(ctx context.Context, id int) (iscsiTarget, bool, error) {
	var o iscsiTarget
	err := i.t.call(ctx, &o, "iscsi.target.get_instance", id)
	if api.IsNotFound(err) {
		return o, false, nil
	}
	if err != nil {
		return o, false, i.t.statusErr(err, "reading iscsi.target "+strconv.Itoa(id))
	}
	return o, true, nil
}

// ours reads the target recorded on the dataset; found is false when it
// is gone or now belongs to another volume (TrueNAS reuses ids).
func (i *iscsiShare) ours(ctx context.Context, dataset string, props zfs.Properties) (iscsiTarget, bool, error) {
	id := storedID(props, propISCSITargetID)
	if id == 0 {
		return iscsiTarget{}, false, nil
	}
	t, ok, err := i.target(ctx, id)
	if err != nil || !ok {
		return t, false, err
	}
	if p := props[propISCSIAssets]; p.IsSet() && t.Name != p.Value {
		i.t.log.Warn("iSCSI target id recorded on the dataset now belongs to another target", "dataset", dataset, "id", id, "target", t.Name)
		return t, false, nil
	}
	return t, true, nil
}

// granted reads the initiator group a target with groups admits through.
// A target that admits every initiator (a group without an initiator
// group, or one with an empty list), or one through a group that is not
// the driver's, is FAILED_PRECONDITION: the driver does not take over
// access that someone else set up.
func (i *iscsiShare) granted(ctx context.Context, t iscsiTarget) (initiatorGroup, error) {
	var g initiatorGroup
	id := 0
	for _, tg := range t.Groups {
		if tg.Initiator == nil || *tg.Initiator == 0 {
			return g, status.Errorf(codes.FailedPrecondition, "%s: iSCSI target %s admits every initiator (a group without an initiator group: it was made before iscsi.hostAccess was allowList): remove its groups (Shares > iSCSI > Targets) once every node using it is published, and the driver will add them back for the nodes it grants", i.t.kind.name, t.Name)
		}
		if id != 0 && *tg.Initiator != id {
			return g, status.Errorf(codes.FailedPrecondition, "%s: iSCSI target %s names initiator groups %d and %d, and with iscsi.hostAccess: allowList the driver keeps one of its own per target: remove the target's groups (Shares > iSCSI > Targets) to let the driver manage them", i.t.kind.name, t.Name, id, *tg.Initiator)
		}
		id = *tg.Initiator
	}
	err := i.t.call(ctx, &g, "iscsi.initiator.get_instance", id)
	if api.IsNotFound(err) {
		return g, status.Errorf(codes.Aborted, "%s: the initiator group %d of iSCSI target %s was deleted meanwhile: retry", i.t.kind.name, id, t.Name)
	}
	if err != nil {
		return g, i.t.statusErr(err, "reading iscsi.initiator "+strconv.Itoa(id))
	}
	switch {
	case len(g.Initiators) == 0:
		return g, status.Errorf(codes.FailedPrecondition, "%s: iSCSI target %s admits every initiator: its initiator group %d has an empty list (TrueNAS's \"Allow All initiators\"): remove the target's groups (Shares > iSCSI > Targets) once every node using it is published, and the driver will add them back for the nodes it grants", i.t.kind.name, t.Name, id)
	case g.Comment != initiatorComment(t.Name):
		return g, status.Errorf(codes.FailedPrecondition, "%s: iSCSI target %s admits the initiators of group %d (%q), which the driver did not make: with iscsi.hostAccess: allowList remove the target's groups (Shares > iSCSI > Targets) to let the driver manage them", i.t.kind.name, t.Name, id, g.Comment)
	}
	return g, nil
}

// findInitiatorGroups lists the driver's initiator groups of a target.
func (i *iscsiShare) findInitiatorGroups(ctx context.Context, target string) ([]initiatorGroup, error) {
	var list []initiatorGroup
	if err := i.t.call(ctx, &list, "iscsi.initiator.query", []any{[]any{"comment", "=", initiatorComment(target)}}, map[string]any{}); err != nil {
		return nil, i.t.statusErr(err, "looking up the initiator group of iSCSI target "+target)
	}
	return list, nil
}

// removeInitiatorGroups deletes the driver's initiator groups of a target
// (one, or a leftover of an interrupted call).
func (i *iscsiShare) removeInitiatorGroups(ctx context.Context, target string) error {
	list, err := i.findInitiatorGroups(ctx, target)
	if err != nil {
		return err
	}
	for _, g := range list {
		if err := i.t.deleteObject(ctx, "iscsi.initiator", g.ID); err != nil {
			return err
		}
	}
	return nil
}

func (i *iscsiShare) setInitiators(ctx context.Context, group int, iqns []string) error {
	if len(iqns) == 0 { // an empty list is "Allow All initiators": never send one
		return status.Error(codes.Internal, "refusing to empty an initiator group (TrueNAS reads that as every initiator)")
	}
	if err := i.t.call(ctx, nil, "iscsi.initiator.update", group, map[string]any{"initiators": iqns}); err != nil {
		return i.t.statusErr(err, "setting the initiators of iscsi.initiator "+strconv.Itoa(group))
	}
	return nil
}

func (i *iscsiShare) setGroups(ctx context.Context, t iscsiTarget, groups []targetGroup) error {
	if err := i.t.call(ctx, nil, "iscsi.target.update", t.ID, map[string]any{"groups": groups}); err != nil {
		return i.t.statusErr(err, "setting the groups of iSCSI target "+t.Name)
	}
	return nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// Grant adds the node's IQN to the target's initiator group; on a closed
// target it makes that group and gives the target its groups.
func (i *iscsiShare) Grant(ctx context.Context, dataset string, props zfs.Properties, iqn string) error {
	t, ok, err := i.ours(ctx, dataset, props)
	if err != nil {
		return err
	}
	if !ok {
		return status.Errorf(codes.NotFound, "%s: the iSCSI target of %s does not exist on %s (delete the volume, or recreate its target)", i.t.kind.name, dataset, i.t.api.Endpoint())
	}
	if len(t.Groups) > 0 {
		g, err := i.granted(ctx, t)
		if err != nil {
			return err
		}
		if containsFold(g.Initiators, iqn) {
			return nil
		}
		return i.setInitiators(ctx, g.ID, append(g.Initiators, iqn))
	}
	// Closed: the first grant. A group left by an interrupted call is
	// reused, holding only this node.
	list, err := i.findInitiatorGroups(ctx, t.Name)
	if err != nil {
		return err
	}
	var g initiatorGroup
	if len(list) > 0 {
		g = list[0]
		if err := i.setInitiators(ctx, g.ID, []string{iqn}); err != nil {
			return err
		}
	} else if err := i.t.call(ctx, &g, "iscsi.initiator.create", map[string]any{"initiators": []string{iqn}, "comment": initiatorComment(t.Name)}); err != nil {
		return i.t.statusErr(err, "making the initiator group of iSCSI target "+t.Name)
	}
	groups := make([]targetGroup, len(i.s.targetGroups))
	for n, tg := range i.s.targetGroups {
		id := g.ID
		tg.Initiator = &id
		groups[n] = tg
	}
	return i.setGroups(ctx, t, groups)
}

// Revoke removes the IQN (every IQN when it is "") from the target's
// initiator group; the last one closes the target (no groups) and then
// deletes the group.
func (i *iscsiShare) Revoke(ctx context.Context, dataset string, props zfs.Properties, iqn string) error {
	t, ok, err := i.ours(ctx, dataset, props)
	if err != nil || !ok {
		return err
	}
	if len(t.Groups) == 0 { // closed: drop a group an interrupted revoke left
		return i.removeInitiatorGroups(ctx, t.Name)
	}
	g, err := i.granted(ctx, t)
	if status.Code(err) == codes.FailedPrecondition {
		// Open, or not the driver's to manage: nothing of ours to withdraw.
		i.t.log.Warn("ControllerUnpublishVolume: the iSCSI target's access is not the driver's; left as it is", "target", t.Name, "error", status.Convert(err).Message())
		return nil
	}
	if err != nil {
		return err
	}
	var keep []string
	for _, x := range g.Initiators {
		if iqn != "" && !strings.EqualFold(x, iqn) {
			keep = append(keep, x)
		}
	}
	switch {
	case len(keep) == len(g.Initiators):
		return nil
	case len(keep) > 0:
		return i.setInitiators(ctx, g.ID, keep)
	}
	if err := i.setGroups(ctx, t, []targetGroup{}); err != nil {
		return err
	}
	return i.removeInitiatorGroups(ctx, t.Name)
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
