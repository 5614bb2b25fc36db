// Lab stand-ins for the two kubernetes-csi node sidecars that cannot be
// built here: node-driver-registrar and livenessprobe publish v2 tags
// without a /v2 module path, so the Go module proxy serves no release of
// them (403), while every other sidecar installs from it. A module of its
// own keeps k8s.io/kubelet out of the driver's go.mod.
module github.com/switchyard-csi/switchyard/deploy/labsidecars

go 1.26.0

require (
	github.com/container-storage-interface/spec v1.13.0
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
	k8s.io/kubelet v0.37.2
)

require (
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
)
