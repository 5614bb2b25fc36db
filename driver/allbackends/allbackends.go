// Package allbackends links every backend into a binary: importing it runs
// each backend's init, which registers its driver type.
package allbackends

import (
	_ "github.com/switchyard-csi/switchyard/driver/infinia"
	_ "github.com/switchyard-csi/switchyard/driver/localhostpath"
	_ "github.com/switchyard-csi/switchyard/driver/truenas"
	_ "github.com/switchyard-csi/switchyard/driver/zfsgeneric"
)
