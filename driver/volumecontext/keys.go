// Package volumecontext is the contract between the controllers, which
// write a volume's volume_context, and the node, which reads it to attach
// the volume: one struct per attach kind (node_attach_driver), with the
// keys democratic-csi uses, so volumes made by democratic-csi keep staging
// and hand-written static PersistentVolumes (node-manual) keep working.
//
// Controllers build a kind (or a whole Context) and call Encode; the node
// calls the kind's Decode, or the top-level Decode, which dispatches on
// node_attach_driver. Decode errors are *Error values naming the key.
package volumecontext

// The volume_context keys (democratic-csi compatible).
const (
	// KeyAttachDriver selects the node's attacher: one of the Driver* names.
	KeyAttachDriver = "node_attach_driver"

	// Who made the volume: democratic-csi scopes secret keys by them
	// ("democratic-csi.org/<driver or instance id>/<key>").
	KeyProvisionerDriver     = "provisioner_driver"
	KeyProvisionerInstanceID = "provisioner_driver_instance_id"

	KeyServer = "server" // nfs, smb, lustre
	KeyShare  = "share"  // nfs, smb, lustre

	KeyPortal    = "portal"    // iscsi, host[:port]
	KeyPortals   = "portals"   // iscsi, csv of host[:port]
	KeyInterface = "interface" // iscsi, an iscsiadm iface record
	KeyIQN       = "iqn"       // iscsi
	KeyLUN       = "lun"       // iscsi

	KeyTransport  = "transport"   // nvmeof, tcp://host:port[?args]
	KeyTransports = "transports"  // nvmeof, csv of transports
	KeyNQN        = "nqn"         // nvmeof
	KeyNSID       = "nsid"        // nvmeof
	KeyUUID       = "uuid"        // nvmeof namespace uuid (Infinia)
	KeyDeviceUUID = "device_uuid" // nvmeof namespace uuid TrueNAS reports (informational)
	// KeyDHCHAP is "required" when the target authenticates hosts with
	// DH-HMAC-CHAP (switchyard's own key; the keys are never here, the
	// node reads them from its node-stage secret).
	KeyDHCHAP = "dhchap"

	KeyPath = "path" // hostpath, the directory on the node

	KeyZFSAssetName = "zfs_asset_name" // zfs-local, pool/dataset or pool/zvol

	// Applied to a block volume's filesystem root after its first format
	// (Infinia StorageClass parameters); any block kind may carry them.
	KeyOwnerUID = "owneruid"
	KeyGroupUID = "groupuid"
	KeyPerms    = "perms"
)

// The node_attach_driver values.
const (
	DriverNFS      = "nfs"
	DriverSMB      = "smb"
	DriverLustre   = "lustre"
	DriverISCSI    = "iscsi"
	DriverNVMeoF   = "nvmeof"
	DriverHostPath = "hostpath"
	DriverZFSLocal = "zfs-local"
)
