// Package allbackends links every backend into a binary: importing it runs
// each backend's init, which registers its driver type. cmd/switchyard
// imports it; nothing else under driver/ imports a backend.
//
// Its imports define the backend packages: each one, with its subpackages,
// is one backend. The architecture tests (architecture_test.go) check the
// rules that follow: backends never import each other, every package that
// calls backend.Register is linked here, registered types are off
// backend.Planned and documented under docs/backends/, simulators never
// import driver/ and driver/ never imports simulators/ or lab/. Adding a
// backend: docs/developing.md.
package allbackends

import (
	// Each backend registers its driver type in its init.
	_ "github.com/switchyard-csi/switchyard/driver/infinia"       // infinia-nvmeof
	_ "github.com/switchyard-csi/switchyard/driver/localhostpath" // local-hostpath
	_ "github.com/switchyard-csi/switchyard/driver/nodemanual"    // node-manual
	_ "github.com/switchyard-csi/switchyard/driver/shareclient"   // nfs-client, smb-client, lustre-client
	_ "github.com/switchyard-csi/switchyard/driver/synology"      // synology-iscsi, -nfs, -smb
	_ "github.com/switchyard-csi/switchyard/driver/truenas"       // freenas-*, truenas-*
	_ "github.com/switchyard-csi/switchyard/driver/zfsgeneric"    // zfs-generic-*
	_ "github.com/switchyard-csi/switchyard/driver/zfslocal"      // zfs-local-dataset, zfs-local-zvol
)
