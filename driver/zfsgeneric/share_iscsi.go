package zfsgeneric

import (
	"context"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// iscsiShare exports a zvol through LIO with targetcli: one target per
// volume (<basename>:<asset>), its zvol as a block backstore, LUN 0.
type iscsiShare struct {
	d       *platform
	listing *listingCache // for CheckShare (share_health_block.go)
}

func (s iscsiShare) Create(ctx context.Context, r engine.ShareRequest) (map[string]string, []zfs.Prop, error) {
	d := s.d
	sh := d.cfg.share
	asset, err := d.assetName("iscsi", r)
	if err != nil {
		return nil, nil, err
	}
	iqn := sh.basename + ":" + asset
	if err := checkQualifiedName("IQN", iqn, "iscsi.shareStrategyTargetCli"); err != nil {
		return nil, nil, err
	}
	var b strings.Builder
	w := func(lines ...string) {
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	w("cd /iscsi", "create "+iqn, "cd /iscsi/"+iqn+"/tpg1")
	var secrets []string
	for _, a := range sh.tpgAttrs {
		w("set attribute " + a.Key + "=" + a.Value)
	}
	for _, a := range sh.tpgAuth {
		w("set auth " + a.Key + "=" + a.Value)
		if strings.Contains(a.Key, "password") {
			secrets = append(secrets, a.Value)
		}
	}
	w("cd /backstores/block", "create "+asset+" /dev/zvol/"+r.Dataset)
	if len(sh.blockAttrs) > 0 {
		w("cd /backstores/block/" + asset)
		for _, a := range sh.blockAttrs {
			w("set attribute " + a.Key + "=" + a.Value)
		}
	}
	w("cd /iscsi/"+iqn+"/tpg1/luns", "create /backstores/block/"+asset)
	out, err := d.runCLI(ctx, []string{"targetcli"}, b.String(), secrets)
	if err != nil {
		return nil, nil, err
	}
	// targetcli exits 0 when it reads a script, even if a line failed: the
	// last line's confirmation is what proves the whole script ran.
	if out.Code != 0 || !strings.Contains(out.Stdout+out.Stderr, "Created LUN 0") {
		return nil, nil, cliFailed(d, "creating iSCSI target "+iqn+" with targetcli", out, secrets)
	}
	vc := volumecontext.ISCSI{Portal: sh.portal, Portals: sh.portals, Interface: sh.iface, IQN: iqn, LUN: 0}.Encode()
	return vc, []zfs.Prop{{Name: propISCSIAssets, Value: asset}}, nil
}

// remove deletes the target, then the backstore; each step tolerates the
// object being gone already, so an interrupted delete can be repeated.
func (s iscsiShare) Remove(ctx context.Context, dataset string, props zfs.Properties) error {
	d := s.d
	asset := d.storedAsset(dataset, props, propISCSIAssets)
	iqn := d.cfg.share.basename + ":" + asset
	for _, step := range []struct{ script, what, done string }{
		{"cd /iscsi\ndelete " + iqn + "\n", "deleting iSCSI target " + iqn, "Deleted Target " + iqn + "."},
		{"cd /backstores/block\ndelete " + asset + "\n", "deleting backstore " + asset, "Deleted storage object " + asset + "."},
	} {
		out, err := d.runCLI(ctx, []string{"targetcli"}, step.script, nil)
		if err != nil {
			return err
		}
		// targetcli exits 0 even when a script line failed or the script
		// never reached it: only its confirmation, or its word that the
		// object is not there, proves the step. Anything else fails it, or
		// the dataset would be destroyed under a target that still exists.
		if !removed(out, step.done) {
			return cliFailed(d, step.what+" with targetcli", out, nil)
		}
	}
	return nil
}

// removed reports whether targetcli's output proves a removal step: its
// confirmation done, or its word that the object is not there.
func removed(out zfs.Output, done string) bool {
	return strings.Contains(out.Stdout+out.Stderr, done) || notThere(out)
}

func (iscsiShare) AssetProps() []string { return []string{propISCSIAssets} }
