package suites

// The features release: a second install of the chart whose controller is
// a Deployment (e2e/deploy/features-values.yaml), for the data-path specs
// of issue 19's features. A VolumeGroupSnapshot needs a csi-snapshotter
// that is not in per-node mode, and the main release runs its controller
// per node for local-hostpath (docs/features.md, "Cluster pieces").

import "context"

const featuresDriver = "features.e2e.switchyard.lab" // csiDriver.name in features-values.yaml

var featuresRel = &extraRelease{name: "switchyard-features", driver: featuresDriver, values: "features-values.yaml"}

// installFeaturesRelease installs the features release with its node
// plugin on node and its controller on the host node.
func installFeaturesRelease(ctx context.Context, node string) {
	var sets []string
	if h := env.Lab.HostNode; h != "" {
		sets = append(sets, "controller.nodeSelector.kubernetes\\.io/hostname="+h)
	}
	featuresRel.install(ctx, node, sets...)
}
