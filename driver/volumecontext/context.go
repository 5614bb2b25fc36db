package volumecontext

import (
	"maps"
	"strings"
)

// Context is a whole volume_context: the attach kind's keys, who made the
// volume, the ownership asked for, and any other keys, kept as written.
type Context struct {
	Attach      Attachment
	Provisioner Provisioner
	Ownership   Ownership
	// Extra holds the keys no part above owns (nil when there are none).
	// The node ignores them; Encode writes them back.
	Extra map[string]string
}

// Encode returns every key: Extra, then the provisioner, ownership and
// attach keys over it.
func (c Context) Encode() map[string]string {
	vc := make(map[string]string, len(c.Extra)+8)
	maps.Copy(vc, c.Extra)
	maps.Copy(vc, c.Provisioner.Encode())
	maps.Copy(vc, c.Ownership.Encode())
	if c.Attach != nil {
		maps.Copy(vc, c.Attach.Encode())
	}
	return vc
}

// Decode reads a volume_context: node_attach_driver picks the kind, whose
// Decode reads its keys; then ownership and the provisioner. An unknown or
// missing node_attach_driver, or a missing or invalid key, is an *Error.
func Decode(vc map[string]string) (Context, error) {
	var c Context
	name := AttachDriver(vc)
	if name == "" {
		return c, missing("", KeyAttachDriver, "", "it selects the node's attacher ("+strings.Join(AttachDrivers(), ", ")+")")
	}
	mk, ok := decoders[name]
	if !ok {
		return c, invalid("", KeyAttachDriver, name, "not an attach driver this contract knows ("+strings.Join(AttachDrivers(), ", ")+")")
	}
	kind := mk()
	if err := kind.Decode(vc); err != nil {
		return c, err
	}
	c.Attach = kind.value()
	if err := c.Ownership.Decode(vc); err != nil {
		return c, err
	}
	_ = c.Provisioner.Decode(vc)
	known := map[string]bool{KeyAttachDriver: true, KeyProvisionerDriver: true, KeyProvisionerInstanceID: true,
		KeyOwnerUID: true, KeyGroupUID: true, KeyPerms: true}
	for _, k := range c.Attach.keys() {
		known[k] = true
	}
	for k, v := range vc {
		if !known[k] {
			if c.Extra == nil {
				c.Extra = map[string]string{}
			}
			c.Extra[k] = v
		}
	}
	return c, nil
}
