package zfsmodel

import "strings"

// The native property table: OpenZFS 2.2 (module/zcommon/zfs_prop.c), in
// zfs_prop_t order, which is the order of "zfs get all".

type propKind int

const (
	kindNumber propKind = iota
	kindString
	kindIndex
)

type propAttr int

const (
	attrDefault        propAttr = iota // settable, not inherited
	attrInherit                        // settable and inherited
	attrReadonly                       // computed
	attrOnetime                        // set at creation only, inherited
	attrOnetimeDefault                 // set at creation only, not inherited
)

type indexEntry struct {
	name string
	val  int
}

type propDesc struct {
	name     string
	colname  string
	kind     propKind
	attr     propAttr
	types    Type
	def      string // default, formatted as stored ("" with noDef)
	noDef    bool   // no default value: zfs shows "-" / skips it
	values   string // the VALUES column of the usage text
	index    []indexEntry
	right    bool // right-aligned column (numbers)
	flex     bool // column width follows the values
	visible  bool
	noneZero bool // numbers where 0 displays as "none" (quota, reservation...)
	noneMax  bool // numbers where UINT64_MAX displays as "none" (limits)
}

func (p *propDesc) readonly() bool {
	return p.attr == attrReadonly || p.attr == attrOnetime || p.attr == attrOnetimeDefault
}
func (p *propDesc) setonce() bool { return p.attr == attrOnetime || p.attr == attrOnetimeDefault }
func (p *propDesc) inheritable() bool {
	return p.attr == attrInherit || p.attr == attrOnetime
}

// indexValue maps a value to the canonical name of its index (aliases such as
// gzip-6 -> gzip, posixacl -> posix); ok=false when it is not a valid name.
func (p *propDesc) indexValue(v string) (string, bool) {
	for _, e := range p.index {
		if e.name == v {
			for _, c := range p.index {
				if c.val == e.val {
					return c.name, true
				}
			}
		}
	}
	return "", false
}

var (
	boolTable     = []indexEntry{{"off", 0}, {"on", 1}}
	checksumTable = idx("on", "off", "fletcher2", "fletcher4", "sha256", "noparity", "sha512", "skein", "edonr", "blake3")
	dedupTable    = idx("on", "off", "verify", "sha256", "sha256,verify", "sha512", "sha512,verify", "skein", "skein,verify", "edonr,verify", "blake3", "blake3,verify")
	compressTable = compressionTable()
	cryptoTable   = idx("on", "off", "aes-128-ccm", "aes-192-ccm", "aes-256-ccm", "aes-128-gcm", "aes-192-gcm", "aes-256-gcm")
)

// idx builds a table of distinct values.
func idx(names ...string) []indexEntry {
	t := make([]indexEntry, len(names))
	for i, n := range names {
		t[i] = indexEntry{n, i}
	}
	return t
}

func compressionTable() []indexEntry {
	names := []string{"on", "off", "lzjb", "gzip"}
	for i := 1; i <= 9; i++ {
		names = append(names, "gzip-"+itoa(i))
	}
	names = append(names, "zle", "lz4", "zstd", "zstd-fast")
	for i := 1; i <= 19; i++ {
		names = append(names, "zstd-"+itoa(i))
	}
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 500, 1000} {
		names = append(names, "zstd-fast-"+itoa(n))
	}
	t := idx(names...)
	for i := range t {
		if t[i].name == "gzip-6" { // gzip is gzip-6
			t[i].val = 3
		}
	}
	return t
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

const (
	fsVol   = Filesystem | Volume
	fsSnap  = Filesystem | Snapshot
	anyDS   = AnyType
	uint64m = "18446744073709551615"
)

func num(name, col string, attr propAttr, types Type, def, values string) *propDesc {
	return &propDesc{name: name, colname: col, kind: kindNumber, attr: attr, types: types, def: def,
		values: values, right: true, visible: true}
}

func str(name, col string, attr propAttr, types Type, def, values string) *propDesc {
	return &propDesc{name: name, colname: col, kind: kindString, attr: attr, types: types, def: def,
		values: values, flex: true, visible: true}
}

func index(name, col string, attr propAttr, types Type, def, values string, t []indexEntry) *propDesc {
	return &propDesc{name: name, colname: col, kind: kindIndex, attr: attr, types: types, def: def,
		values: values, index: t, flex: true, visible: true}
}

func noDef(p *propDesc) *propDesc  { p.noDef = true; return p }
func flex(p *propDesc) *propDesc   { p.flex = true; return p }
func hidden(p *propDesc) *propDesc { p.visible = false; return p }
func noneZero(p *propDesc) *propDesc {
	p.noneZero = true
	return p
}
func noneMax(p *propDesc) *propDesc { p.noneMax = true; return p }

var propTable = []*propDesc{
	noDef(str("type", "TYPE", attrReadonly, anyDS, "", "filesystem | volume | snapshot | bookmark")),
	func() *propDesc {
		p := num("creation", "CREATION", attrReadonly, anyDS, "", "<date>")
		p.right, p.flex = false, true
		return p
	}(),
	num("used", "USED", attrReadonly, anyDS, "", "<size>"),
	num("available", "AVAIL", attrReadonly, fsVol, "", "<size>"),
	num("referenced", "REFER", attrReadonly, anyDS, "", "<size>"),
	num("compressratio", "RATIO", attrReadonly, anyDS, "", "<1.00x or higher if compressed>"),
	index("mounted", "MOUNTED", attrReadonly, Filesystem, "off", "yes | no", boolTable),
	noDef(str("origin", "ORIGIN", attrReadonly, fsVol, "", "<snapshot>")),
	noneZero(num("quota", "QUOTA", attrDefault, Filesystem, "0", "<size> | none")),
	noneZero(num("reservation", "RESERV", attrDefault, fsVol, "0", "<size> | none")),
	num("volsize", "VOLSIZE", attrDefault, Snapshot|Volume, "0", "<size>"),
	num("volblocksize", "VOLBLOCK", attrOnetime, Volume, "16384", "512 to 128k, power of 2"),
	num("recordsize", "RECSIZE", attrInherit, Filesystem, "131072", "512 to 1M, power of 2"),
	str("mountpoint", "MOUNTPOINT", attrInherit, Filesystem, "/", "<path> | legacy | none"),
	str("sharenfs", "SHARENFS", attrInherit, Filesystem, "off", "on | off | NFS share options"),
	index("checksum", "CHECKSUM", attrInherit, fsVol, "on", "on | off | fletcher2 | fletcher4 | sha256 | sha512 | skein | edonr | blake3", checksumTable),
	index("compression", "COMPRESS", attrInherit, fsVol, "on", "on | off | lzjb | gzip | gzip-[1-9] | zle | lz4 | zstd | zstd-[1-19] | zstd-fast | zstd-fast-[1-10,20,30,40,50,60,70,80,90,100,500,1000]", compressTable),
	index("atime", "ATIME", attrInherit, Filesystem, "on", "on | off", boolTable),
	index("devices", "DEVICES", attrInherit, fsSnap, "on", "on | off", boolTable),
	index("exec", "EXEC", attrInherit, fsSnap, "on", "on | off", boolTable),
	index("setuid", "SETUID", attrInherit, fsSnap, "on", "on | off", boolTable),
	index("readonly", "RDONLY", attrInherit, fsVol, "off", "on | off", boolTable),
	index("zoned", "ZONED", attrInherit, Filesystem, "off", "on | off", boolTable),
	index("snapdir", "SNAPDIR", attrInherit, Filesystem, "hidden", "hidden | visible", idx("hidden", "visible")),
	index("aclmode", "ACLMODE", attrInherit, Filesystem, "discard", "discard | groupmask | passthrough | restricted", idx("discard", "groupmask", "passthrough", "restricted")),
	index("aclinherit", "ACLINHERIT", attrInherit, Filesystem, "restricted", "discard | noallow | restricted | passthrough | passthrough-x",
		[]indexEntry{{"discard", 0}, {"noallow", 1}, {"restricted", 2}, {"passthrough", 3}, {"secure", 2}, {"passthrough-x", 4}}),
	flex(num("createtxg", "CREATETXG", attrReadonly, anyDS, "", "<uint64>")),
	hidden(noDef(str("name", "NAME", attrReadonly, anyDS, "", ""))),
	index("canmount", "CANMOUNT", attrDefault, Filesystem, "on", "on | off | noauto", idx("off", "on", "noauto")),
	index("xattr", "XATTR", attrInherit, fsSnap, "on", "on | off | dir | sa", []indexEntry{{"off", 0}, {"on", 1}, {"sa", 2}, {"dir", 1}}),
	index("copies", "COPIES", attrInherit, fsVol, "1", "1 | 2 | 3", idx("1", "2", "3")),
	index("version", "VERSION", attrDefault, fsSnap, "5", "1 | 2 | 3 | 4 | 5 | current", []indexEntry{{"1", 1}, {"2", 2}, {"3", 3}, {"4", 4}, {"5", 5}, {"current", 5}}),
	index("utf8only", "UTF8ONLY", attrOnetime, fsSnap, "off", "on | off", boolTable),
	index("normalization", "NORMALIZATION", attrOnetime, fsSnap, "none", "none | formC | formD | formKC | formKD", idx("none", "formD", "formKC", "formC", "formKD")),
	index("casesensitivity", "CASE", attrOnetime, fsSnap, "sensitive", "sensitive | insensitive | mixed", idx("sensitive", "insensitive", "mixed")),
	index("vscan", "VSCAN", attrInherit, Filesystem, "off", "on | off", boolTable),
	index("nbmand", "NBMAND", attrInherit, fsSnap, "off", "on | off", boolTable),
	str("sharesmb", "SHARESMB", attrInherit, Filesystem, "off", "on | off | SMB share options"),
	noneZero(num("refquota", "REFQUOTA", attrDefault, Filesystem, "0", "<size> | none")),
	noneZero(num("refreservation", "REFRESERV", attrDefault, fsVol, "0", "<size> | none")),
	flex(num("guid", "GUID", attrReadonly, anyDS, "", "<uint64>")),
	index("primarycache", "PRIMARYCACHE", attrInherit, anyDS, "all", "all | none | metadata", idx("none", "metadata", "all")),
	index("secondarycache", "SECONDARYCACHE", attrInherit, anyDS, "all", "all | none | metadata", idx("none", "metadata", "all")),
	num("usedbysnapshots", "USEDSNAP", attrReadonly, fsVol, "", "<size>"),
	num("usedbydataset", "USEDDS", attrReadonly, fsVol, "", "<size>"),
	num("usedbychildren", "USEDCHILD", attrReadonly, fsVol, "", "<size>"),
	num("usedbyrefreservation", "USEDREFRESERV", attrReadonly, fsVol, "", "<size>"),
	index("defer_destroy", "DEFER_DESTROY", attrReadonly, Snapshot, "off", "yes | no", boolTable),
	num("userrefs", "USERREFS", attrReadonly, Snapshot, "", "<count>"),
	index("logbias", "LOGBIAS", attrInherit, fsVol, "latency", "latency | throughput", idx("latency", "throughput")),
	flex(num("objsetid", "OBJSETID", attrReadonly, anyDS, "", "<uint64>")),
	index("dedup", "DEDUP", attrInherit, fsVol, "off", "on | off | verify | sha256[,verify] | sha512[,verify] | skein[,verify] | edonr,verify | blake3[,verify]", dedupTable),
	str("mlslabel", "MLSLABEL", attrInherit, anyDS, "none", "<sensitivity label>"),
	index("sync", "SYNC", attrInherit, fsVol, "standard", "standard | always | disabled", idx("standard", "always", "disabled")),
	index("dnodesize", "DNSIZE", attrInherit, Filesystem, "legacy", "legacy | auto | 1k | 2k | 4k | 8k | 16k", idx("legacy", "auto", "1k", "2k", "4k", "8k", "16k")),
	num("refcompressratio", "REFRATIO", attrReadonly, anyDS, "", "<1.00x or higher if compressed>"),
	num("written", "WRITTEN", attrReadonly, anyDS, "", "<size>"),
	noDef(str("clones", "CLONES", attrReadonly, Snapshot, "", "<dataset>[,...]")),
	num("logicalused", "LUSED", attrReadonly, fsVol, "", "<size>"),
	num("logicalreferenced", "LREFER", attrReadonly, anyDS, "", "<size>"),
	index("volmode", "VOLMODE", attrInherit, fsVol, "default", "default | full | geom | dev | none", []indexEntry{{"default", 0}, {"full", 1}, {"geom", 1}, {"dev", 2}, {"none", 3}}),
	noneMax(num("filesystem_limit", "FSLIMIT", attrDefault, Filesystem, uint64m, "<count> | none")),
	noneMax(num("snapshot_limit", "SSLIMIT", attrDefault, fsVol, uint64m, "<count> | none")),
	noneMax(num("filesystem_count", "FSCOUNT", attrReadonly, Filesystem, uint64m, "<count>")),
	noneMax(num("snapshot_count", "SSCOUNT", attrReadonly, fsVol, uint64m, "<count>")),
	index("snapdev", "SNAPDEV", attrInherit, fsVol, "hidden", "hidden | visible", idx("hidden", "visible")),
	index("acltype", "ACLTYPE", attrInherit, fsSnap, "off", "off | nfsv4 | posix",
		[]indexEntry{{"off", 0}, {"posix", 1}, {"nfsv4", 2}, {"disabled", 0}, {"noacl", 0}, {"posixacl", 1}}),
	str("context", "CONTEXT", attrDefault, anyDS, "none", "<selinux context>"),
	str("fscontext", "FSCONTEXT", attrDefault, anyDS, "none", "<selinux fscontext>"),
	str("defcontext", "DEFCONTEXT", attrDefault, anyDS, "none", "<selinux defcontext>"),
	str("rootcontext", "ROOTCONTEXT", attrDefault, anyDS, "none", "<selinux rootcontext>"),
	index("relatime", "RELATIME", attrInherit, Filesystem, "on", "on | off", boolTable),
	index("redundant_metadata", "REDUND_MD", attrInherit, fsVol, "all", "all | most | some | none", idx("all", "most", "some", "none")),
	index("overlay", "OVERLAY", attrInherit, Filesystem, "on", "on | off", boolTable),
	noDef(str("receive_resume_token", "RESUMETOK", attrReadonly, fsVol, "", "<string token>")),
	index("encryption", "ENCRYPTION", attrOnetime, anyDS, "off", "on | off | aes-128-ccm | aes-192-ccm | aes-256-ccm | aes-128-gcm | aes-192-gcm | aes-256-gcm", cryptoTable),
	str("keylocation", "KEYLOCATION", attrDefault, fsVol, "none", "prompt | <file URI> | <https URL> | <http URL>"),
	index("keyformat", "KEYFORMAT", attrOnetimeDefault, fsVol, "none", "none | raw | hex | passphrase", idx("none", "raw", "hex", "passphrase")),
	flex(num("pbkdf2iters", "PBKDF2ITERS", attrOnetimeDefault, fsVol, "0", "<iters>")),
	noDef(str("encryptionroot", "ENCROOT", attrReadonly, anyDS, "", "<filesystem | volume>")),
	noDef(index("keystatus", "KEYSTATUS", attrReadonly, anyDS, "", "none | unavailable | available", idx("none", "unavailable", "available"))),
	num("special_small_blocks", "SPECIAL_SMALL_BLOCKS", attrInherit, Filesystem, "0", "zero or 512 to 1M, power of 2"),
	noDef(str("redact_snaps", "RSNAPS", attrReadonly, anyDS, "", "<snapshot>[,...]")),
	func() *propDesc {
		p := num("snapshots_changed", "SNAPSHOTS_CHANGED", attrReadonly, fsVol, "", "<date>")
		p.right, p.flex = false, true
		return p
	}(),
	index("prefetch", "PREFETCH", attrInherit, anyDS, "all", "none | metadata | all", idx("none", "metadata", "all")),
}

var propByName = func() map[string]*propDesc {
	m := make(map[string]*propDesc, 2*len(propTable))
	for _, p := range propTable {
		m[p.name] = p
	}
	// Column names are accepted as abbreviations ("avail", "refer").
	for _, p := range propTable {
		if c := strings.ToLower(p.colname); m[c] == nil {
			m[c] = p
		}
	}
	return m
}()

// lookupProp resolves a native property name or abbreviation.
func lookupProp(name string) *propDesc { return propByName[name] }

func validPropChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':'
}

// isUserProp mirrors zfs_prop_user: lowercase name characters with a colon.
func isUserProp(name string) bool {
	colon := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !validPropChar(c) {
			return false
		}
		if c == ':' {
			colon = true
		}
	}
	return colon
}

// isUserquotaProp and isWrittenProp recognise the userquota@/written@
// families, which zfs parses but this model does not implement.
func isUserquotaProp(name string) bool {
	for _, p := range []string{"userused@", "userquota@", "groupused@", "groupquota@",
		"userobjused@", "userobjquota@", "groupobjused@", "groupobjquota@",
		"projectused@", "projectquota@", "projectobjused@", "projectobjquota@"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func isWrittenProp(name string) bool {
	return strings.HasPrefix(name, "written@") || strings.HasPrefix(name, "written#")
}

// width is zprop_width: the initial column width of a native property.
func (p *propDesc) width() int {
	w := len(p.colname)
	switch p.kind {
	case kindNumber:
		if w < 5 {
			w = 5
		}
	case kindIndex:
		for _, e := range p.index {
			if len(e.name) > w {
				w = len(e.name)
			}
		}
	}
	return w
}
