package volumecontext

import "strings"

// Attachment is one attach kind's keys: NFS, SMB, Lustre, ISCSI, NVMeoF,
// HostPath or ZFSLocal. Each kind also has a Decode method on its pointer,
// which reads the kind's keys (not node_attach_driver: the caller picked
// the kind by it) and returns an *Error naming the first key that is
// missing or invalid; the fields it could read are set even then.
type Attachment interface {
	// AttachDriver is the kind's node_attach_driver value.
	AttachDriver() string
	// Encode returns the kind's keys, node_attach_driver included.
	Encode() map[string]string
	// keys lists the keys the kind owns besides node_attach_driver.
	keys() []string
}

// decoders makes an empty kind for each node_attach_driver value.
var decoders = map[string]func() decodable{
	DriverNFS:      func() decodable { return &NFS{} },
	DriverSMB:      func() decodable { return &SMB{} },
	DriverLustre:   func() decodable { return &Lustre{} },
	DriverISCSI:    func() decodable { return &ISCSI{} },
	DriverNVMeoF:   func() decodable { return &NVMeoF{} },
	DriverHostPath: func() decodable { return &HostPath{} },
	DriverZFSLocal: func() decodable { return &ZFSLocal{} },
}

type decodable interface {
	Decode(vc map[string]string) error
	value() Attachment
}

// AttachDrivers lists the node_attach_driver values this package knows,
// sorted.
func AttachDrivers() []string {
	return []string{DriverHostPath, DriverISCSI, DriverLustre, DriverNFS, DriverNVMeoF, DriverSMB, DriverZFSLocal}
}

// AttachDriver is the volume_context's node_attach_driver ("" when unset).
func AttachDriver(vc map[string]string) string {
	return strings.TrimSpace(vc[KeyAttachDriver])
}

// get is a key's value without surrounding blanks.
func get(vc map[string]string, key string) string {
	return strings.TrimSpace(vc[key])
}

// csv splits a comma-separated value into trimmed, non-empty, unique
// items, keeping their order (nil when there are none).
func csv(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// union is the items of one and many (each csv), unique, in order.
func union(one string, many []string) []string {
	return csv(one + "," + strings.Join(many, ","))
}
