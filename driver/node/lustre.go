package node

import (
	"context"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// Lustre is the "lustre" attacher: volume_context server (the MGS NID,
// e.g. 10.0.0.1@tcp) and share (/fsname) are mounted as server:share with
// mount -t lustre.
type Lustre struct{}

var lustreShare = share{
	name:    "lustre",
	fsTypes: []string{"lustre"},
	source:  func(server, share string) string { return server + ":" + share },
	decode: func(vc map[string]string) (string, string, error) {
		var c volumecontext.Lustre
		err := c.Decode(vc)
		return c.Server, c.Share, err
	},
}

// Name implements Attacher.
func (Lustre) Name() string { return "lustre" }

// Validate implements Attacher.
func (Lustre) Validate(v *Volume) error { return lustreShare.validate(v) }

// Stage implements Attacher.
func (Lustre) Stage(ctx context.Context, h *Host, v *Volume) error {
	plain, sensitive := mountFlags(v)
	return lustreShare.mount(ctx, h, v, lustreShare.device(v), lustreShare.fsType(v), plain, sensitive)
}

// Unstage implements Attacher: the mount was all.
func (Lustre) Unstage(context.Context, *Host, *Volume) error { return nil }
