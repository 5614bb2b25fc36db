package truenas

import (
	"context"
	"strings"
	"sync"

	"github.com/switchyard-csi/switchyard/driver/truenas/api"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// iscsiShare exports zvols as iSCSI LUN 0 of a target per volume:
// iscsi.target, iscsi.extent and iscsi.targetextent, as democratic-csi.
type iscsiShare struct {
	t *truenas
	s shareSettings

	mu       sync.Mutex
	basename string // iscsi.global basename, read once
}

// maxExtentName is TrueNAS's limit on extent names (targets share it).
const maxExtentName = 64

func (i *iscsiShare) AssetProps() []string {
	return []string{propISCSITargetID, propISCSIExtentID, propISCSIMappingID, propISCSIAssets}
}

func (i *iscsiShare) globalBasename(ctx context.Context) (string, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.basename != "" {
		return i.basename, nil
	}
	var g struct {
		Basename string `json:"basename"`
	}
	if err := i.t.call(ctx, &g, "iscsi.global.config"); err != nil {
		return "", i.t.statusErr(err, "reading iscsi.global")
	}
	i.basename = g.Basename
	return g.Basename, nil
}

// createOrFind creates an object; when the server says it exists (an
// interrupted earlier call made it), the existing one is looked up.
func (i *iscsiShare) createOrFind(ctx context.Context, ns string, req map[string]any, field string, value any, exists ...string) (object, error) {
	var made object
	err := i.t.call(ctx, &made, ns+".create", req)
	if err == nil {
		return made, nil
	}
	low := strings.ToLower(err.Error())
	match := false
	for _, e := range exists {
		match = match || strings.Contains(low, strings.ToLower(e))
	}
	if !match {
		return made, i.t.statusErr(err, "creating "+ns)
	}
	found, ok, ferr := i.t.findObject(ctx, ns, field, value)
	if ferr != nil {
		return made, ferr
	}
	if !ok {
		return made, i.t.statusErr(err, "creating "+ns)
	}
	return found, nil
}

func (i *iscsiShare) Create(ctx context.Context, r engine.ShareRequest) (map[string]string, []zfs.Prop, error) {
	name := assetName(i.s, r)
	if err := checkAssetName("iscsi", name, maxExtentName); err != nil {
		return nil, nil, err
	}
	basename, err := i.globalBasename(ctx)
	if err != nil {
		return nil, nil, err
	}
	groups := i.s.targetGroups
	if i.s.hostAccess != engine.OpenTargets {
		// Closed until the first grant: a target without groups admits
		// nobody (see access.go).
		groups = []targetGroup{}
	}
	target, err := i.createOrFind(ctx, "iscsi.target", map[string]any{"name": name, "mode": "ISCSI", "groups": groups},
		"name", name, "already exists")
	if err != nil {
		return nil, nil, err
	}
	comment := ""
	if i.s.extentComment != nil {
		comment = i.s.extentComment.Render(r.Name, r.Params)
	}
	extent := map[string]any{"name": name, "type": "DISK", "disk": "zvol/" + r.Dataset, "comment": comment, "ro": false}
	for k, v := range i.s.extent {
		extent[k] = v
	}
	ext, err := i.createOrFind(ctx, "iscsi.extent", extent, "name", name, "must be unique", "already exists")
	if err != nil {
		return nil, nil, err
	}
	mapping, err := i.mapLUN(ctx, target.ID, ext.ID)
	if err != nil {
		return nil, nil, err
	}
	vc := volumecontext.ISCSI{Portal: i.s.portal, Portals: i.s.portals, Interface: i.s.iface, IQN: basename + ":" + name, LUN: 0}.Encode()
	return vc, []zfs.Prop{idProp(propISCSITargetID, target.ID), idProp(propISCSIExtentID, ext.ID),
		idProp(propISCSIMappingID, mapping), {Name: propISCSIAssets, Value: name}}, nil
}

// mapLUN makes the extent LUN 0 of the target (or finds that mapping).
func (i *iscsiShare) mapLUN(ctx context.Context, target, extent int) (int, error) {
	var made object
	err := i.t.call(ctx, &made, "iscsi.targetextent.create", map[string]any{"target": target, "extent": extent, "lunid": 0})
	if err == nil {
		return made.ID, nil
	}
	if !api.IsValidation(err) && !api.IsExists(err) {
		return 0, i.t.statusErr(err, "mapping the extent to the target")
	}
	var list []struct {
		ID     int `json:"id"`
		Target int `json:"target"`
		Extent int `json:"extent"`
		LunID  int `json:"lunid"`
	}
	if qerr := i.t.call(ctx, &list, "iscsi.targetextent.query", []any{[]any{"target", "=", target}}, map[string]any{}); qerr != nil {
		return 0, i.t.statusErr(qerr, "looking up iscsi.targetextent")
	}
	for _, m := range list {
		if m.Extent == extent && m.LunID == 0 {
			return m.ID, nil
		}
	}
	return 0, i.t.statusErr(err, "mapping the extent to the target")
}

// Remove deletes the target and the extent, each only when it still
// carries this volume's asset name (ids are reused by TrueNAS).
func (i *iscsiShare) Remove(ctx context.Context, dataset string, props zfs.Properties) error {
	name := props[propISCSIAssets].Value
	if !props[propISCSIAssets].IsSet() {
		name = ""
	}
	if id := storedID(props, propISCSITargetID); id != 0 {
		o, ok, err := i.target(ctx, id)
		if err != nil {
			return err
		}
		if ok && (name == "" || o.Name == name) {
			// force: a node still logged in must not keep the volume alive.
			if err := i.t.deleteObject(ctx, "iscsi.target", id, true); err != nil {
				return err
			}
			if name == "" {
				name = o.Name
			}
		} else if ok {
			i.t.log.Warn("iSCSI target id recorded on the dataset now belongs to another target; leaving it", "dataset", dataset, "id", id, "target", o.Name)
		}
		if i.s.hostAccess != engine.OpenTargets && name != "" {
			// After the target: deleting the group first would leave the
			// target's groups without one, which TrueNAS reads as "every
			// initiator".
			if err := i.removeInitiatorGroups(ctx, name); err != nil {
				return err
			}
		}
	}
	if id := storedID(props, propISCSIExtentID); id != 0 {
		var o struct {
			object
			Disk string `json:"disk"`
		}
		err := i.t.call(ctx, &o, "iscsi.extent.get_instance", id)
		if api.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return i.t.statusErr(err, "reading iscsi.extent")
		}
		if o.Disk != "zvol/"+dataset {
			i.t.log.Warn("iSCSI extent id recorded on the dataset now belongs to another extent; leaving it", "dataset", dataset, "id", id, "disk", o.Disk)
			return nil
		}
		// remove=false: the zvol is the volume; force: in use by a session.
		return i.t.deleteObject(ctx, "iscsi.extent", id, false, true)
	}
	return nil
}
