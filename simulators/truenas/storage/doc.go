// Package storage is the storage half of the TrueNAS middleware simulator:
// the pool, pool.dataset, snapshot (zfs.snapshot up to 25.04,
// pool.snapshot from 25.10), filesystem (setperm, chown, stat) and
// replication.run_onetime services, served over one zfsmodel.Model.
//
// Register adds, for one simulated TrueNAS version, exactly the methods
// that version has, with its payload schemas (unknown fields, types,
// enums and defaults), its validation attribute names and error texts,
// and its entry shapes (dataset properties as {parsed, rawvalue, value,
// source}). The transports (REST v2.0, JSON-RPC over WebSocket) live in
// the parent package and render the mw error kinds returned here.
//
// TrueNAS imports pools with altroot /mnt, so a dataset tank/a is mounted
// at /mnt/tank/a while the model (like zfs without an altroot) places it
// at /tank/a; entries report the /mnt path and the filesystem methods map
// /mnt paths back to the model's directories.
package storage
