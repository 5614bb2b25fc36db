package truenas

import (
	"context"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/truenas/api"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// nfsShare shares filesystems with sharing.nfs.
type nfsShare struct {
	t *truenas
	s shareSettings
}

func (n *nfsShare) AssetProps() []string { return []string{"mountpoint", propNFSShareID} }

func (n *nfsShare) Create(ctx context.Context, r engine.ShareRequest) (map[string]string, []zfs.Prop, error) {
	if r.Mountpoint == "" || r.Mountpoint == "-" {
		return nil, nil, status.Errorf(codes.FailedPrecondition, "%s: %s has no mountpoint to share", n.t.kind.name, r.Dataset)
	}
	comment := "democratic-csi (" + n.t.csiName + "): " + r.Dataset
	if n.s.commentTemplate != nil {
		comment = n.s.commentTemplate.Render(r.Name, r.Params)
	}
	share := map[string]any{
		"path":     r.Mountpoint,
		"comment":  comment,
		"networks": nonNil(n.s.nfsNets),
		"hosts":    nonNil(n.s.nfsHosts),
		"ro":       false,
	}
	for field, v := range map[string]string{"maproot_user": n.s.maprootUser, "maproot_group": n.s.maprootGroup,
		"mapall_user": n.s.mapallUser, "mapall_group": n.s.mapallGroup} {
		if v != "" {
			share[field] = v
		}
	}
	var made object
	err := n.t.call(ctx, &made, "sharing.nfs.create", share)
	if err != nil {
		// A share made by an earlier, interrupted call: adopt it.
		if !api.IsValidation(err) || !strings.Contains(strings.ToLower(err.Error()), "export") {
			return nil, nil, n.t.statusErr(err, "creating the NFS share of "+r.Mountpoint)
		}
		found, ok, ferr := n.t.findObject(ctx, "sharing.nfs", "path", r.Mountpoint)
		if ferr != nil {
			return nil, nil, ferr
		}
		if !ok {
			return nil, nil, n.t.statusErr(err, "creating the NFS share of "+r.Mountpoint)
		}
		made = found
	}
	vc := volumecontext.NFS{Server: n.s.host, Share: r.Mountpoint}.Encode()
	return vc, []zfs.Prop{idProp(propNFSShareID, made.ID)}, nil
}

// Remove deletes the recorded share, but only when it still exports this
// dataset: TrueNAS reuses ids.
func (n *nfsShare) Remove(ctx context.Context, dataset string, props zfs.Properties) error {
	id := storedID(props, propNFSShareID)
	if id == 0 {
		return nil
	}
	o, ok, err := n.t.getObject(ctx, "sharing.nfs", id)
	if err != nil || !ok {
		return err
	}
	if mp := props["mountpoint"].Value; o.Path != mp {
		n.t.log.Warn("NFS share id recorded on the dataset now belongs to another share; leaving it", "dataset", dataset, "id", id, "path", o.Path)
		return nil
	}
	return n.t.deleteObject(ctx, "sharing.nfs", id)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
