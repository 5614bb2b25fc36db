//go:build tools

// Package sidecarbuild pins the kubernetes-csi sidecars that the lab's
// cluster runs beside the driver; scripts/ensure-kube.sh builds them.
package sidecarbuild

import (
	_ "github.com/kubernetes-csi/external-attacher/v4/cmd/csi-attacher"
	_ "github.com/kubernetes-csi/external-provisioner/v6/cmd/csi-provisioner"
	_ "github.com/kubernetes-csi/external-resizer/v2/cmd/csi-resizer"
	_ "github.com/kubernetes-csi/external-snapshotter/v8/cmd/csi-snapshotter"
	_ "github.com/kubernetes-csi/external-snapshotter/v8/cmd/snapshot-controller"
)
