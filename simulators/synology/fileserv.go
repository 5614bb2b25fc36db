package synology

func init() {
	register("SYNO.Core.FileServ.NFS", "entry.cgi", 2, false, map[string]handler{"get": nfsGet, "set": nfsSet})
	register("SYNO.Core.FileServ.NFS.SharePrivilege", "entry.cgi", 1, false, map[string]handler{"load": nfsPrivLoad, "save": nfsPrivSave})
	register("SYNO.Core.FileServ.SMB", "entry.cgi", 3, false, map[string]handler{"get": smbGet})
}

func nfsGet(s *Server, _ *call) (any, error) {
	return map[string]any{
		"enable_nfs": s.st.NFS.Enabled, "enable_nfs_v4": s.st.NFS.EnabledV4, "enabled_minor_ver": s.st.NFS.MinorVer,
		"nfs_v4_domain": "", "read_size": 8192, "write_size": 8192, "support_encrypt_share": 1,
		"support_major_ver": 4, "support_minor_ver": 1, "unix_pri_enable": true,
	}, nil
}

func nfsSet(s *Server, c *call) (any, error) {
	s.st.NFS.Enabled = c.boolean("enable_nfs", s.st.NFS.Enabled)
	s.st.NFS.EnabledV4 = c.boolean("enable_nfs_v4", s.st.NFS.EnabledV4)
	if n, ok := c.int64("enabled_minor_ver"); ok {
		s.st.NFS.MinorVer = int(n)
	}
	return nil, s.commitLocked()
}

func nfsPrivLoad(s *Server, c *call) (any, error) {
	sh, err := s.shareArg(c, "share_name")
	if err != nil {
		return nil, err
	}
	rules := []map[string]any{}
	for _, r := range sh.NFSRules {
		rules = append(rules, map[string]any{"client": r.Client, "privilege": r.Privilege, "root_squash": r.RootSquash,
			"async": r.Async, "crossmnt": r.Crossmnt, "insecure": r.Insecure,
			"security_flavor": map[string]bool{"sys": true, "kerberos": false, "kerberos_integrity": false, "kerberos_privacy": false}})
	}
	return map[string]any{"share_name": sh.Name, "rule": rules}, nil
}

// nfsPrivSave replaces a share's NFS rules (an empty list stops exporting
// it).
func nfsPrivSave(s *Server, c *call) (any, error) {
	sh, err := s.shareArg(c, "share_name")
	if err != nil {
		return nil, err
	}
	var rules []nfsRule
	if err := c.jsonParam("rule", &rules); err != nil {
		return nil, err
	}
	for i, r := range rules {
		if r.Client == "" || (r.Privilege != "rw" && r.Privilege != "ro") {
			return nil, fail(codeInvalidParam)
		}
		if r.RootSquash == "" {
			rules[i].RootSquash = "root"
		}
	}
	sh.NFSRules = rules
	return nil, s.commitLocked()
}

func smbGet(_ *Server, _ *call) (any, error) {
	return map[string]any{"enable_samba": true, "workgroup": "WORKGROUP", "smb_max_protocol": 3, "smb_min_protocol": 1}, nil
}
