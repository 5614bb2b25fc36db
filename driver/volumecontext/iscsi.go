package volumecontext

import (
	"strconv"
	"strings"
)

// ISCSI is node_attach_driver "iscsi": log in to target IQN through every
// portal and use LUN. democratic-csi writes all five keys, empty ones
// included; so does Encode.
type ISCSI struct {
	Portal    string   // host[:port] (port 3260 when missing)
	Portals   []string // more portals (written as csv)
	Interface string   // iscsiadm iface record ("" = default)
	IQN       string
	LUN       int
}

// AttachDriver implements Attachment.
func (ISCSI) AttachDriver() string { return DriverISCSI }

// Encode implements Attachment.
func (c ISCSI) Encode() map[string]string {
	return map[string]string{
		KeyAttachDriver: DriverISCSI,
		KeyPortal:       c.Portal,
		KeyPortals:      strings.Join(c.Portals, ","),
		KeyInterface:    c.Interface,
		KeyIQN:          c.IQN,
		KeyLUN:          strconv.Itoa(c.LUN),
	}
}

// Decode reads iqn and lun (required; lun a number), and portal and
// portals (at least one portal between them).
func (c *ISCSI) Decode(vc map[string]string) error {
	c.Portal, c.Portals = get(vc, KeyPortal), csv(vc[KeyPortals])
	c.Interface, c.IQN = get(vc, KeyInterface), get(vc, KeyIQN)
	lun := get(vc, KeyLUN)
	n, lunErr := strconv.Atoi(lun)
	if lunErr == nil && n >= 0 {
		c.LUN = n
	}
	switch {
	case c.IQN == "":
		return missing(DriverISCSI, KeyIQN, "", "")
	case lun == "":
		return missing(DriverISCSI, KeyLUN, "", "")
	case lunErr != nil || n < 0:
		return invalid(DriverISCSI, KeyLUN, lun, "must be a LUN number")
	case len(c.AllPortals()) == 0:
		return missing(DriverISCSI, KeyPortal, KeyPortals, "the target's portal")
	}
	return nil
}

// AllPortals is portal and portals together, without duplicates, in order.
func (c ISCSI) AllPortals() []string { return union(c.Portal, c.Portals) }

func (ISCSI) keys() []string {
	return []string{KeyPortal, KeyPortals, KeyInterface, KeyIQN, KeyLUN}
}

func (c *ISCSI) value() Attachment { return *c }
