package zfsgeneric

// The user properties democratic-csi's zfs-generic drivers record the
// target/subsystem name in, so Remove finds it whatever the naming keys
// say now.
const (
	propISCSIAssets  = "democratic-csi:iscsi_assets_name"
	propNVMeoFAssets = "democratic-csi:nvmeof_assets_name"
)
