// Package node is the CSI node service shared by every backend and by the
// proxy. Node calls use only the request (volume_context, secrets, paths),
// never a driver config file: the node plugin does not mount the connections
// folder (docs/proxy.md, "Calls").
//
// The Service owns what is the same for every kind of volume: argument
// validation, the per-volume records kept in the state directory,
// idempotency and access-mode rules, publishing (a bind mount from the
// staging path to the target path), unmounting, stats and expansion
// dispatch. Calls on one volume come one at a time: csi.Server holds the
// volume's lock around each call. An Attacher, chosen by volume_context
// "node_attach_driver" (or, for a static PV without it, by publish_context),
// only makes the volume appear at the staging path and releases it again;
// it reads its keys through driver/volumecontext, the contract the
// controllers write:
//
//   - hostpath: binds a directory of the node (key path)
//   - nfs, smb, lustre: mount a share (server, share; SMB credentials from
//     the secrets username/password/domain)
//   - iscsi: logs in through every portal (portal, portals, iqn, lun,
//     interface; CHAP from node-db.* secrets)
//   - nvmeof: connects every transport (transport, transports, nqn, nsid or
//     uuid)
//   - zfs-local: a local zvol or dataset (zfs_asset_name)
//
// Block devices (iscsi, nvmeof, zvols) share one path: formatted only when
// blank, mounted, grown to the device, or bound raw onto
// <staging>/block_device; iSCSI and NVMe-oF connections shared by several
// volumes are released by the last of them (Host.Volumes).
//
// Every host command runs through one seam (Exec) and every mount through
// k8s.io/mount-utils, so unit tests substitute fakes for both.
package node
