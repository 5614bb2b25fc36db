package proxy

import (
	"fmt"
	"strings"
)

// family is how a driver type's volumes reach a node: the protocol and
// whether the node sees a file system or a block device. Members of a set
// must share it: the PVC's user chose one kind of storage, and which
// member serves a volume must not change how pods mount it (an SMB share
// needs credentials an NFS export does not; a block volume is formatted
// on the node).
type family struct {
	protocol string // nfs, smb, iscsi, nvmeof, local, lustre, or the type name
	block    bool
}

func (f family) String() string {
	kind := "file"
	if f.block {
		kind = "block"
	}
	return f.protocol + ", " + kind
}

// familyOf derives the family from democratic-csi's driver type names,
// which end in or contain the protocol (zfs-generic-nfs,
// freenas-api-iscsi, infinia-nvmeof, local-hostpath, zfs-local-zvol). A
// type with no known protocol word is a family of its own.
func familyOf(typeName string) family {
	words := strings.Split(typeName, "-")
	for _, w := range words {
		switch w {
		case "nfs", "smb", "lustre":
			return family{protocol: w}
		case "iscsi", "nvmeof":
			return family{protocol: w, block: true}
		}
	}
	switch {
	case strings.Contains(typeName, "zvol"):
		return family{protocol: "local", block: true}
	case strings.Contains(typeName, "local"):
		return family{protocol: "local"}
	}
	return family{protocol: typeName}
}

// checkFamilies refuses a set whose members differ in family, naming the
// first member of each.
func checkFamilies(members []string, types []string) error {
	if len(members) == 0 {
		return nil
	}
	first := familyOf(types[0])
	for i := 1; i < len(members); i++ {
		if f := familyOf(types[i]); f != first {
			return fmt.Errorf("connections %s (%s: %s) and %s (%s: %s) serve different kinds of volume; a set's members must share protocol and kind",
				members[0], types[0], first, members[i], types[i], f)
		}
	}
	return nil
}
