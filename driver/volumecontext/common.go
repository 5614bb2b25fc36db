package volumecontext

import "strconv"

// Provisioner is who made the volume: the driver name and instance_id of
// the config that made it. The node scopes democratic-csi's prefixed
// secret keys by them.
type Provisioner struct {
	Driver     string // provisioner_driver, e.g. zfs-generic-iscsi
	InstanceID string // provisioner_driver_instance_id
}

// Encode returns the keys that are set.
func (p Provisioner) Encode() map[string]string {
	vc := map[string]string{}
	if p.Driver != "" {
		vc[KeyProvisionerDriver] = p.Driver
	}
	if p.InstanceID != "" {
		vc[KeyProvisionerInstanceID] = p.InstanceID
	}
	return vc
}

// Decode reads both keys; neither is required, so it never fails.
func (p *Provisioner) Decode(vc map[string]string) error {
	p.Driver, p.InstanceID = get(vc, KeyProvisionerDriver), get(vc, KeyProvisionerInstanceID)
	return nil
}

// Ownership is what the node gives a block volume's filesystem root after
// formatting it (Infinia's owneruid, groupuid and perms). Empty fields
// leave the root as mkfs made it.
type Ownership struct {
	OwnerUID string // numeric uid
	GroupUID string // numeric gid
	Perms    string // octal mode, e.g. 0750
}

// IsZero reports whether no field is set.
func (o Ownership) IsZero() bool { return o == Ownership{} }

// Encode returns the keys that are set.
func (o Ownership) Encode() map[string]string {
	vc := map[string]string{}
	for k, v := range map[string]string{KeyOwnerUID: o.OwnerUID, KeyGroupUID: o.GroupUID, KeyPerms: o.Perms} {
		if v != "" {
			vc[k] = v
		}
	}
	return vc
}

// Decode reads the three keys, each optional: ids must be numbers, perms
// octal permissions.
func (o *Ownership) Decode(vc map[string]string) error {
	o.OwnerUID, o.GroupUID, o.Perms = get(vc, KeyOwnerUID), get(vc, KeyGroupUID), get(vc, KeyPerms)
	for _, f := range []struct{ key, val string }{{KeyOwnerUID, o.OwnerUID}, {KeyGroupUID, o.GroupUID}} {
		if n, err := strconv.Atoi(f.val); f.val != "" && (err != nil || n < 0) {
			return invalid("", f.key, f.val, "must be a numeric id")
		}
	}
	if n, err := strconv.ParseUint(o.Perms, 8, 32); o.Perms != "" && (err != nil || n > 0o7777) {
		return invalid("", KeyPerms, o.Perms, "must be octal permissions such as 0750")
	}
	return nil
}

// UID is the owner to set, or -1 to leave it (as os.Chown takes it).
func (o Ownership) UID() int { return idOr(o.OwnerUID) }

// GID is the group to set, or -1 to leave it.
func (o Ownership) GID() int { return idOr(o.GroupUID) }

// Mode is the permissions to set; ok is false when none are asked for.
func (o Ownership) Mode() (mode uint32, ok bool) {
	n, err := strconv.ParseUint(o.Perms, 8, 32)
	return uint32(n), o.Perms != "" && err == nil
}

func idOr(s string) int {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return n
	}
	return -1
}
