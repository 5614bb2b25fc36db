// Package truenas is the TrueNAS backend family: freenas-api-{nfs,smb,
// iscsi,nvmeof} (also spelled truenas-api-*), which do everything through
// the TrueNAS middleware API, and freenas-{nfs,smb,iscsi} (truenas-*), which
// run zfs over SSH and share through the API. Both are driver/zfs/engine's
// controller on a TrueNAS platform: datasets over pool.dataset.* and the
// snapshot API (or zfs over SSH), shares over sharing.nfs/smb, iscsi.* and
// nvmet.*.
// Config keys, user properties and volume_context are democratic-csi's, so
// volumes democratic-csi made are found and managed.
package truenas
