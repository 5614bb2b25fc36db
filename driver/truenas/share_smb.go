package truenas

import (
	"context"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/truenas/api"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// smbShare shares filesystems with sharing.smb.
type smbShare struct {
	t *truenas
	s shareSettings
}

func (m *smbShare) AssetProps() []string { return []string{"mountpoint", propSMBShareID} }

func (m *smbShare) Create(ctx context.Context, r engine.ShareRequest) (map[string]string, []zfs.Prop, error) {
	name := assetName(m.s, r)
	if err := checkAssetName("smb", name, 80); err != nil {
		return nil, nil, err
	}
	share := map[string]any{"name": name, "path": r.Mountpoint}
	for k, v := range m.s.smbFields {
		share[k] = v
	}
	if m.s.smbAuxTemplate != nil {
		share["auxsmbconf"] = m.s.smbAuxTemplate.Render(r.Name, r.Params)
	}
	var made object
	err := m.t.call(ctx, &made, "sharing.smb.create", share)
	if err != nil {
		if !api.IsValidation(err) || !strings.Contains(strings.ToLower(err.Error()), "already exists") {
			return nil, nil, m.t.statusErr(err, "creating SMB share "+name)
		}
		found, ok, ferr := m.t.findObject(ctx, "sharing.smb", "name", name)
		if ferr != nil {
			return nil, nil, ferr
		}
		if !ok || found.Path != r.Mountpoint {
			return nil, nil, m.t.statusErr(err, "creating SMB share "+name+" (the name is taken by a share of another path)")
		}
		made = found
	}
	vc := volumecontext.SMB{Server: m.s.host, Share: name}.Encode()
	return vc, []zfs.Prop{idProp(propSMBShareID, made.ID)}, nil
}

func (m *smbShare) Remove(ctx context.Context, dataset string, props zfs.Properties) error {
	id := storedID(props, propSMBShareID)
	if id == 0 {
		return nil
	}
	o, ok, err := m.t.getObject(ctx, "sharing.smb", id)
	if err != nil || !ok {
		return err
	}
	if o.Path != props["mountpoint"].Value {
		m.t.log.Warn("SMB share id recorded on the dataset now belongs to another share; leaving it", "dataset", dataset, "id", id, "path", o.Path)
		return nil
	}
	return m.t.deleteObject(ctx, "sharing.smb", id)
}
