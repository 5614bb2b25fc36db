package volumecontext

import (
	"strconv"
	"strings"
)

// NVMeoF is node_attach_driver "nvmeof": connect to subsystem NQN over
// every transport and use the namespace NSID, or the one with UUID.
type NVMeoF struct {
	Transport  string   // <type>://<address>[:port][?nvme connect options], e.g. tcp://10.0.0.5:4420
	Transports []string // more transports (written as csv)
	NQN        string
	NSID       uint32 // 0: none given; the namespace is found by UUID
	UUID       string // namespace uuid, lowercase (Infinia)
	// DeviceUUID is the namespace uuid TrueNAS reports; informational,
	// the node finds the namespace by NSID.
	DeviceUUID string
	// DHCHAP: the target authenticates hosts with DH-HMAC-CHAP, so the
	// node must present a key (from its node-stage secret; never here).
	DHCHAP bool
}

// DHCHAPRequired is KeyDHCHAP's value when DHCHAP is set.
const DHCHAPRequired = "required"

// AttachDriver implements Attachment.
func (NVMeoF) AttachDriver() string { return DriverNVMeoF }

// Encode implements Attachment: transport, transports and nqn always,
// nsid, uuid, device_uuid and dhchap when set.
func (c NVMeoF) Encode() map[string]string {
	vc := map[string]string{
		KeyAttachDriver: DriverNVMeoF,
		KeyTransport:    c.Transport,
		KeyTransports:   strings.Join(c.Transports, ","),
		KeyNQN:          c.NQN,
	}
	if c.NSID != 0 {
		vc[KeyNSID] = strconv.FormatUint(uint64(c.NSID), 10)
	}
	if c.UUID != "" {
		vc[KeyUUID] = strings.ToLower(c.UUID)
	}
	if c.DeviceUUID != "" {
		vc[KeyDeviceUUID] = c.DeviceUUID
	}
	if c.DHCHAP {
		vc[KeyDHCHAP] = DHCHAPRequired
	}
	return vc
}

// Decode reads nqn (required), nsid (required without uuid; 1 or more),
// uuid, and transport and transports (at least one between them).
func (c *NVMeoF) Decode(vc map[string]string) error {
	c.Transport, c.Transports = get(vc, KeyTransport), csv(vc[KeyTransports])
	c.NQN = get(vc, KeyNQN)
	c.UUID = strings.ToLower(get(vc, KeyUUID))
	c.DeviceUUID = get(vc, KeyDeviceUUID)
	dhchap := get(vc, KeyDHCHAP)
	c.DHCHAP = dhchap == DHCHAPRequired
	nsid := get(vc, KeyNSID)
	n, nsidErr := strconv.ParseUint(nsid, 10, 32)
	if nsidErr == nil {
		c.NSID = uint32(n)
	}
	switch {
	case c.NQN == "":
		return missing(DriverNVMeoF, KeyNQN, "", "")
	case nsid == "" && c.UUID == "":
		return missing(DriverNVMeoF, KeyNSID, KeyUUID, "the namespace")
	case nsid != "" && (nsidErr != nil || n == 0):
		return invalid(DriverNVMeoF, KeyNSID, nsid, "must be a namespace id (1 or more)")
	case strings.ContainsAny(c.UUID, "/ "):
		return invalid(DriverNVMeoF, KeyUUID, c.UUID, "not a namespace uuid")
	case dhchap != "" && !c.DHCHAP:
		return invalid(DriverNVMeoF, KeyDHCHAP, dhchap, "must be "+DHCHAPRequired+" or absent")
	case len(c.AllTransports()) == 0:
		return missing(DriverNVMeoF, KeyTransport, KeyTransports, "the subsystem's address, e.g. tcp://10.0.0.5:4420")
	}
	return nil
}

// AllTransports is transport and transports together, without
// duplicates, in order.
func (c NVMeoF) AllTransports() []string { return union(c.Transport, c.Transports) }

func (NVMeoF) keys() []string {
	return []string{KeyTransport, KeyTransports, KeyNQN, KeyNSID, KeyUUID, KeyDeviceUUID, KeyDHCHAP}
}

func (c *NVMeoF) value() Attachment { return *c }
