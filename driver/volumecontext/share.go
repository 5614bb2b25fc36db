package volumecontext

// NFS is node_attach_driver "nfs": mount server:share.
type NFS struct {
	Server string // host name or address
	Share  string // exported path
}

// SMB is node_attach_driver "smb": mount //server/share.
type SMB struct {
	Server string
	Share  string // share name (a leading "/" is ignored by the node)
}

// Lustre is node_attach_driver "lustre": mount server:share with -t lustre.
type Lustre struct {
	Server string // MGS NID, e.g. 10.0.0.1@tcp
	Share  string // /fsname[/subdir]
}

var shareKeys = []string{KeyServer, KeyShare}

func encodeShare(driver, server, share string) map[string]string {
	return map[string]string{KeyAttachDriver: driver, KeyServer: server, KeyShare: share}
}

func decodeShare(driver string, vc map[string]string) (server, share string, err error) {
	server, share = get(vc, KeyServer), get(vc, KeyShare)
	switch {
	case server == "":
		err = missing(driver, KeyServer, "", "")
	case share == "":
		err = missing(driver, KeyShare, "", "")
	}
	return server, share, err
}

// AttachDriver implements Attachment.
func (NFS) AttachDriver() string { return DriverNFS }

// Encode implements Attachment.
func (c NFS) Encode() map[string]string { return encodeShare(DriverNFS, c.Server, c.Share) }

// Decode reads server and share (both required).
func (c *NFS) Decode(vc map[string]string) (err error) {
	c.Server, c.Share, err = decodeShare(DriverNFS, vc)
	return err
}

func (NFS) keys() []string       { return shareKeys }
func (c *NFS) value() Attachment { return *c }

// AttachDriver implements Attachment.
func (SMB) AttachDriver() string { return DriverSMB }

// Encode implements Attachment.
func (c SMB) Encode() map[string]string { return encodeShare(DriverSMB, c.Server, c.Share) }

// Decode reads server and share (both required).
func (c *SMB) Decode(vc map[string]string) (err error) {
	c.Server, c.Share, err = decodeShare(DriverSMB, vc)
	return err
}

func (SMB) keys() []string       { return shareKeys }
func (c *SMB) value() Attachment { return *c }

// AttachDriver implements Attachment.
func (Lustre) AttachDriver() string { return DriverLustre }

// Encode implements Attachment.
func (c Lustre) Encode() map[string]string { return encodeShare(DriverLustre, c.Server, c.Share) }

// Decode reads server and share (both required).
func (c *Lustre) Decode(vc map[string]string) (err error) {
	c.Server, c.Share, err = decodeShare(DriverLustre, vc)
	return err
}

func (Lustre) keys() []string       { return shareKeys }
func (c *Lustre) value() Attachment { return *c }
