package zfsgeneric

// Health of a property share (engine.ShareChecker): the share property the
// driver set when it made the volume (sharenfs or sharesmb, from the
// connection's shareStrategySetDatasetProperties) must still be on the
// dataset. An administrator's `zfs set sharenfs=off` (or `zfs inherit`)
// unexports the volume behind the driver's back: ShareMissing.

import (
	"context"
	"fmt"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

func (s propertyShare) CheckShare(ctx context.Context, dataset string, _ zfs.Properties) (string, error) {
	prop := "share" + s.attach
	want := ""
	for _, p := range s.d.cfg.share.props {
		if p.Key == prop {
			want = p.Value
		}
	}
	if want == "" || want == "off" {
		return "", nil // this connection does not share with the property
	}
	got, err := s.d.Datasets().Get(ctx, dataset, prop)
	if err != nil {
		return "", err
	}
	if v := got[prop].Value; v == "off" || v == "" || v == "-" {
		return fmt.Sprintf("the %s share of %s is gone: %s is %q (the driver set %q)", map[string]string{"nfs": "NFS", "smb": "SMB"}[s.attach], dataset, prop, v, want), nil
	}
	return "", nil
}
