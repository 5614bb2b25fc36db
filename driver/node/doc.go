// Package node is the CSI node service shared by every backend and by the
// proxy. Node calls use only the request (volume_context, secrets, paths),
// never a driver config file (DESIGN.md contract 4).
//
// The Service owns what is the same for every kind of volume: argument
// validation, per-volume serialisation, the per-volume records kept in the
// state directory, idempotency and access-mode rules, publishing (a bind
// mount from the staging path to the target path), unmounting, stats and
// expansion dispatch. An Attacher, chosen by volume_context
// "node_attach_driver", only makes the volume appear at the staging path
// (and releases it again): hostpath binds a directory; later attachers log
// in to iSCSI targets, connect NVMe-oF subsystems, mount NFS shares.
//
// Every host command runs through one seam (Exec) and every mount through
// k8s.io/mount-utils, so unit tests substitute fakes for both.
package node
