// Package allbackends links every backend into a binary: importing it runs
// each backend's init, which registers its driver type.
package allbackends

import (
	// Each backend registers its driver type in its init.
	_ "github.com/switchyard-csi/switchyard/driver/infinia"       // infinia-nvmeof
	_ "github.com/switchyard-csi/switchyard/driver/localhostpath" // local-hostpath
	_ "github.com/switchyard-csi/switchyard/driver/truenas"       // freenas-*, truenas-*
	_ "github.com/switchyard-csi/switchyard/driver/zfsgeneric"    // zfs-generic-*
)
