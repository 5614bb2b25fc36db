package infinia

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

// volume_context (and publish_context) keys; node-attach.md's nvmeof set
// plus the namespace uuid and the ownership DDN's parameters ask for.
const (
	ctxAttach      = "node_attach_driver"
	ctxProvisioner = "provisioner_driver"
	ctxNQN         = "nqn"
	ctxTransport   = "transport"
	ctxTransports  = "transports"
	ctxNSID        = "nsid"
	ctxUUID        = "uuid"
	ctxOwner       = "owneruid"
	ctxGroup       = "groupuid"
	ctxPerms       = "perms"

	attachNVMeoF = "nvmeof"
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
	if vc[ctxOwner] != "" || vc[ctxGroup] != "" {
		def.owner, def.group = vc[ctxOwner], vc[ctxGroup]
	}
	if vc[ctxPerms] != "" {
		def.perms = vc[ctxPerms]
	}
	return def
}

// volumeContext builds what the node needs to connect: the subsystem's
// NQN, every listener as tcp://addr:port, the namespace id and uuid. It
// fails when the volume is not a namespace of s or s has no listener.
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
	if nsid == 0 {
		return nil, fmt.Errorf("volume %s is not a namespace of subsystem %s", v.Name, s.Name)
	}
	transports := transportsOf(s, dataPort)
	if len(transports) == 0 {
		return nil, fmt.Errorf("subsystem %s of volume %s listens on no instance: expose it (instances parameter or default_instance_ids)", s.Name, v.Name)
	}
	vc := map[string]string{
		ctxAttach:      attachNVMeoF,
		ctxProvisioner: DriverName,
		ctxNQN:         s.NQN,
		ctxTransport:   transports[0],
		ctxTransports:  strings.Join(transports, ","),
		ctxNSID:        strconv.Itoa(nsid),
	}
	if uuid != "" {
		vc[ctxUUID] = strings.ToLower(uuid)
	}
	if o.owner != "" && o.group != "" {
		vc[ctxOwner], vc[ctxGroup] = o.owner, o.group
	}
	if o.perms != "" {
		vc[ctxPerms] = o.perms
	}
	return vc, nil
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
