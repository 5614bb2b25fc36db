package truenas

// MutableProperties narrows ModifyVolume (VolumeAttributesClass) on the
// freenas-api-* drivers to the live-changeable properties that
// pool.dataset.update takes (nativeFields); the SSH drivers (freenas-*)
// run zfs set and offer the engine's whole list.
func (*apiPlatform) MutableProperties() []string {
	return []string{"atime", "compression", "copies", "dedup", "recordsize", "snapdir", "sync"}
}
