package infinia

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/infinia/api"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// xattrs the driver stores on the volumes it makes, so the ownership asked
// for at creation is known again in ListVolumes, ControllerGetVolume and
// ControllerPublishVolume.
const (
	xattrName        = "csi_volume_name"
	xattrProvisioner = "csi_provisioner"
	xattrOwner       = "csi_owneruid"
	xattrGroup       = "csi_groupuid"
	xattrPerms       = "csi_perms"
)

// ownership is the owneruid/groupuid/perms a node applies after mkfs.
type ownership struct{ owner, group, perms string }

// ownershipOf is what the volume's xattrs say, else the account's defaults.
func ownershipOf(a *account, v *api.Volume) ownership {
	o := ownership{owner: a.owner, group: a.group, perms: a.perms}
	if s, ok := v.XAttrs[xattrOwner].(string); ok && s != "" {
		o.owner = s
		o.group, _ = v.XAttrs[xattrGroup].(string)
	}
	if s, ok := v.XAttrs[xattrPerms].(string); ok && s != "" {
		o.perms = s
	}
	return o
}

// fromContext takes the ownership a request's volume_context carries,
// falling back to def for keys it does not set.
func fromContext(vc map[string]string, def ownership) ownership {
	var o volumecontext.Ownership
	_ = o.Decode(vc) // the node checks the values; they pass through as given
	if o.OwnerUID != "" || o.GroupUID != "" {
		def.owner, def.group = o.OwnerUID, o.GroupUID
	}
	if o.Perms != "" {
		def.perms = o.Perms
	}
	return def
}

// volumeContext builds what the node needs to connect (volume_context,
// and publish_context for static PVs): the subsystem's NQN, every listener
// as tcp://addr:port, the namespace id and uuid, and the ownership DDN's
// parameters ask for. It fails when the volume is not a namespace of s or
// s has no listener.
func volumeContext(v *api.Volume, s *api.Subsystem, o ownership, dataPort int) (map[string]string, error) {
	nsid := v.NSID.Int()
	uuid := v.UUID
	for _, ns := range s.Namespaces {
		if ns.Volume == v.Name || (uuid != "" && strings.EqualFold(ns.UUID, uuid)) {
			if nsid == 0 {
				nsid = ns.NSID.Int()
			}
			if uuid == "" {
				uuid = ns.UUID
			}
		}
	}
	if nsid <= 0 {
		return nil, fmt.Errorf("volume %s is not a namespace of subsystem %s", v.Name, s.Name)
	}
	transports := transportsOf(s, dataPort)
	if len(transports) == 0 {
		return nil, fmt.Errorf("subsystem %s of volume %s listens on no instance: expose it (instances parameter or default_instance_ids)", s.Name, v.Name)
	}
	c := volumecontext.Context{
		Attach: volumecontext.NVMeoF{Transport: transports[0], Transports: transports, NQN: s.NQN,
			NSID: uint32(nsid), UUID: strings.ToLower(uuid)},
		Provisioner: volumecontext.Provisioner{Driver: DriverName},
		Ownership:   volumecontext.Ownership{Perms: o.perms},
	}
	if o.owner != "" && o.group != "" {
		c.Ownership.OwnerUID, c.Ownership.GroupUID = o.owner, o.group
	}
	return c.Encode(), nil
}

// transportsOf lists every listener address as <trtype>://<addr>:<port>,
// in the server's order, without duplicates.
func transportsOf(s *api.Subsystem, dataPort int) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range s.Listeners {
		tr := strings.ToLower(l.TrType)
		if tr == "" {
			tr = "tcp"
		}
		port := string(l.TrSvcID)
		if port == "" {
			port = strconv.Itoa(dataPort)
		}
		for _, a := range l.TrAddrs {
			if a == "" {
				continue
			}
			t := tr + "://" + net.JoinHostPort(a, port)
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}
