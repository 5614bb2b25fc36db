// Package sharing is the TrueNAS simulator's sharing services: NFS and SMB
// shares (sharing.nfs, sharing.smb), the iSCSI target (iscsi.global,
// iscsi.portal, iscsi.initiator, iscsi.auth, iscsi.target, iscsi.extent,
// iscsi.targetextent) and, from 25.10, the NVMe-oF target (nvmet.global,
// nvmet.subsys, nvmet.namespace, nvmet.port, nvmet.port_subsys, nvmet.host,
// nvmet.host_subsys).
//
// Register adds the methods a simulated middleware version has to an
// mw.Registry; the transports of package truenas serve them. Payloads,
// defaults, validation (attribute names, texts, and the version's
// dialect: the old schema's "Field was not expected" up to the namespace's
// port to pydantic, "Extra inputs are not permitted" after) and ids
// follow the real middleware (plugins/nfs.py, smb.py, iscsi_/, nvmet/).
// Ids are max(id)+1, so the highest id is handed out again after its
// object is deleted, as the real sqlite database does.
//
// Paths are checked against the shared ZFS model (shares must name a
// directory inside a mounted dataset, extents and namespaces an existing
// zvol), and deleting a dataset removes what is attached to it. Objects
// persist as one JSON file per namespace under Options.StateDir.
package sharing
