// Package synology simulates the DSM 7.x Web API of a Synology NAS, the
// part that CSI drivers use: SYNO.API.Info, SYNO.API.Auth (sessions, the
// sid as `_sid` parameter or cookie), the iSCSI LUN and target APIs with
// snapshots and clones, storage volumes, shared folders with quotas,
// share snapshots, share permissions and NFS privileges.
//
// Requests are GET (query string) or POST (form); every answer is DSM's
// envelope {"success": true, "data": ...} or {"success": false, "error":
// {"code": N}} with DSM's numeric codes (codes.go). Parameter values are
// read the way DSM reads them: a JSON value when the text is JSON
// ("\"name\"", [1,2], true), the raw text otherwise.
//
// The simulator was written from Synology's published Web API guides and
// from what the public CSI drivers (democratic-csi's controller-synology,
// SynologyOpenSource/synology-csi) send and read; it never imports the
// driver it tests. LUNs are sparse files and shared folders directories
// under the state directory; with Options.Kernel they are served for real
// (LIO, nfsd, samba) by simulators/kernel, as the other simulators do.
//
// DSM stores LUNs on btrfs or ext4 volumes, not ZFS, so the simulator
// keeps its own small model (state.go) instead of simulators/zfsmodel:
// LUN and share snapshots are copies of the data taken at snapshot time.
package synology
