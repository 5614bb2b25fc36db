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

// User properties democratic-csi's TrueNAS drivers record: TrueNAS reuses
// ids after a delete, so an id alone never proves an object is ours; the
// share's path or the asset name is checked before anything is deleted.
const (
	propNFSShareID     = "democratic-csi:freenas_nfs_share_id"
	propSMBShareID     = "democratic-csi:freenas_smb_share_id"
	propISCSITargetID  = "democratic-csi:freenas_iscsi_target_id"
	propISCSIExtentID  = "democratic-csi:freenas_iscsi_extent_id"
	propISCSIMappingID = "democratic-csi:freenas_iscsi_targettoextent_id"
	propISCSIAssets    = "democratic-csi:freenas_iscsi_assets_name"
	propNVMeSubsysID   = "democratic-csi:freenas_nvmeof_subsystem_id"
	propNVMeNamespace  = "democratic-csi:freenas_nvmeof_namespace_id"
	propNVMeAssets     = "democratic-csi:freenas_nvmeof_assets_name"
)

func (t *truenas) sharer(s shareSettings) engine.Sharer {
	switch t.kind.protocol {
	case "nfs":
		return &nfsShare{t: t, s: s}
	case "smb":
		return &smbShare{t: t, s: s}
	case "iscsi":
		return &iscsiShare{t: t, s: s}
	}
	return &nvmeofShare{t: t, s: s}
}

// assetName is the target/share/subsystem name of a volume: nameTemplate
// (or the dataset's leaf name) with namePrefix and nameSuffix, lowercased,
// as democratic-csi names them.
func assetName(s shareSettings, r engine.ShareRequest) string {
	name := r.Dataset[strings.LastIndexByte(r.Dataset, '/')+1:]
	if s.nameTemplate != nil {
		name = s.nameTemplate.Render(r.Name, r.Params)
	}
	return strings.ToLower(s.namePrefix + name + s.nameSuffix)
}

// checkAssetName refuses names the API would refuse, before any call.
func checkAssetName(section, name string, maxLen int) error {
	if name == "" {
		return status.Errorf(codes.InvalidArgument, "%s.nameTemplate rendered an empty name", section)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.:", c)) {
			return status.Errorf(codes.InvalidArgument, "%s name %q contains %q: names may hold a-z, 0-9, '-', '_', '.' and ':' (check %s.nameTemplate, namePrefix and nameSuffix)", section, name, c, section)
		}
	}
	if len(name) > maxLen {
		return status.Errorf(codes.FailedPrecondition, "%s name %s is %d characters; TrueNAS allows %d: shorten %s.namePrefix/nameSuffix/nameTemplate", section, name, len(name), maxLen, section)
	}
	return nil
}

// storedID reads an id property ("-" or absent: 0).
func storedID(props zfs.Properties, name string) int {
	p := props[name]
	if !p.IsSet() {
		return 0
	}
	n, _ := strconv.Atoi(p.Value)
	return n
}

func idProp(name string, id int) zfs.Prop { return zfs.Prop{Name: name, Value: strconv.Itoa(id)} }

// object is the part of an API entry sharers look at.
type object struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	Path string `json:"path"`
}

// getObject reads one object by id; found is false when it is gone.
func (t *truenas) getObject(ctx context.Context, ns string, id int) (object, bool, error) {
	var o object
	err := t.call(ctx, &o, ns+".get_instance", id)
	if api.IsNotFound(err) {
		return o, false, nil
	}
	if err != nil {
		return o, false, t.statusErr(err, "reading "+ns+" "+strconv.Itoa(id))
	}
	return o, true, nil
}

// findObject looks an object up by one field (after "already exists").
func (t *truenas) findObject(ctx context.Context, ns, field string, value any) (object, bool, error) {
	var list []object
	if err := t.call(ctx, &list, ns+".query", []any{[]any{field, "=", value}}, map[string]any{}); err != nil {
		return object{}, false, t.statusErr(err, "looking up "+ns)
	}
	if len(list) == 0 {
		return object{}, false, nil
	}
	return list[0], true, nil
}

// deleteObject deletes by id; gone already is fine.
func (t *truenas) deleteObject(ctx context.Context, ns string, id int, extra ...any) error {
	err := t.call(ctx, nil, ns+".delete", append([]any{id}, extra...)...)
	if err == nil || api.IsNotFound(err) {
		return nil
	}
	return t.statusErr(err, "deleting "+ns+" "+strconv.Itoa(id))
}
