package storage

import "strconv"

// Choices of pool.dataset.create/update (plugins/pool_/utils.py and the
// 25.10 API models).
var (
	compressionChoices = func() []string {
		l := []string{"ON", "OFF", "LZ4", "GZIP", "GZIP-1", "GZIP-9", "ZSTD", "ZSTD-FAST", "ZLE", "LZJB"}
		for i := 1; i <= 19; i++ {
			l = append(l, "ZSTD-"+strconv.Itoa(i))
		}
		for _, i := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 500, 1000} {
			l = append(l, "ZSTD-FAST-"+strconv.Itoa(i))
		}
		return l
	}()
	checksumChoices = []string{"ON", "OFF", "FLETCHER2", "FLETCHER4", "SHA256", "SHA512", "SKEIN", "EDONR", "BLAKE3"}
	// volblocksizes maps the API's block sizes to bytes.
	volblocksizes = map[string]int64{
		"512": 512, "512B": 512, "1K": 1 << 10, "2K": 2 << 10, "4K": 4 << 10, "8K": 8 << 10,
		"16K": 16 << 10, "32K": 32 << 10, "64K": 64 << 10, "128K": 128 << 10,
	}
	volblocksizeChoices = []string{"512", "512B", "1K", "2K", "4K", "8K", "16K", "32K", "64K", "128K"}
	// recordsizeChoices is pool.dataset.recordsize_choices on a pool
	// without large_blocks limits.
	recordsizeChoices = []string{"512", "512B", "1K", "2K", "4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M"}
	onOff             = []string{"ON", "OFF"}
)

// fsOnly and volOnly are the attributes valid for one dataset type.
var (
	fsOnly  = []string{"aclmode", "acltype", "atime", "casesensitivity", "quota", "refquota", "recordsize"}
	volOnly = []string{"force_size", "sparse", "volsize", "volblocksize"}
)

// datasetSchema is pool_dataset_create (update=false) or
// pool_dataset_update for this version.
func (s *service) datasetSchema(update bool) schema {
	i := 0
	if update {
		i = 1
	}
	s.dsSchemaOnce[i].Do(func() { s.dsSchema[i] = s.buildDatasetSchema(update) })
	return s.dsSchema[i]
}

func (s *service) buildDatasetSchema(update bool) schema {
	pyd := s.pydantic()
	snapdir := []string{"VISIBLE", "HIDDEN"}
	if pyd {
		snapdir = []string{"DISABLED", "VISIBLE", "HIDDEN"}
	}
	userProp := &schema{name: "user_property", pydantic: pyd, fields: []field{
		{name: "key", typ: tStr, required: true, pattern: ".*:.*"},
		{name: "value", typ: tStr, required: !update},
	}}
	pct := func(name string) field {
		return field{name: name, typ: tInt, inherit: true, check: rangeCheck(pyd, 0, 100)}
	}
	f := []field{
		{name: "comments", typ: tStr, inherit: true},
		{name: "sync", typ: tStr, inherit: true, enum: []string{"STANDARD", "ALWAYS", "DISABLED"}},
		{name: "snapdev", typ: tStr, inherit: true, enum: []string{"HIDDEN", "VISIBLE"}},
		{name: "compression", typ: tStr, inherit: true, enum: compressionChoices},
		{name: "atime", typ: tStr, inherit: true, enum: onOff},
		{name: "exec", typ: tStr, inherit: true, enum: onOff},
		{name: "managedby", typ: tStr, inherit: true},
		{name: "quota", typ: tInt, null: true, check: quotaCheck(pyd)},
		pct("quota_warning"), pct("quota_critical"),
		{name: "refquota", typ: tInt, null: true, check: quotaCheck(pyd)},
		pct("refquota_warning"), pct("refquota_critical"),
		{name: "reservation", typ: tInt},
		{name: "refreservation", typ: tInt},
		{name: "special_small_block_size", typ: tInt, inherit: true},
		{name: "copies", typ: tInt, inherit: true},
		{name: "snapdir", typ: tStr, inherit: true, enum: snapdir},
		{name: "deduplication", typ: tStr, inherit: true, enum: []string{"ON", "VERIFY", "OFF"}},
		{name: "checksum", typ: tStr, inherit: true, enum: checksumChoices},
		{name: "readonly", typ: tStr, inherit: true, enum: onOff},
		{name: "recordsize", typ: tStr, inherit: true},
		{name: "aclmode", typ: tStr, inherit: true, enum: []string{"PASSTHROUGH", "RESTRICTED", "DISCARD"}},
		{name: "acltype", typ: tStr, inherit: true, enum: []string{"OFF", "NFSV4", "POSIX"}},
		{name: "volsize", typ: tInt},
		{name: "force_size", typ: tBool},
		{name: "user_properties", typ: tList, items: userProp},
	}
	if !pyd {
		// the legacy update schema is the create schema patched, so it
		// keeps xattr
		f = append(f, field{name: "xattr", typ: tStr, inherit: true, enum: []string{"ON", "SA"}})
	}
	if update {
		upd := &schema{name: "user_property", pydantic: pyd, fields: []field{
			{name: "key", typ: tStr, required: true, pattern: ".*:.*"},
			{name: "value", typ: tStr},
			{name: "remove", typ: tBool},
		}}
		f = append(f, field{name: "user_properties_update", typ: tList, items: upd})
		// both the legacy Patch of pool_dataset_create and 25.10's
		// PoolDatasetUpdate keep create_ancestors: accepted, meaningless
		f = append(f, field{name: "create_ancestors", typ: tBool})
		return schema{name: "pool_dataset_update", fields: f, pydantic: pyd}
	}
	f = append(f,
		field{name: "name", typ: tStr, required: true},
		field{name: "type", typ: tStr, enum: []string{"FILESYSTEM", "VOLUME"}, def: "FILESYSTEM"},
		field{name: "volblocksize", typ: tStr, enum: volblocksizeChoices},
		field{name: "sparse", typ: tBool},
		field{name: "casesensitivity", typ: tStr, inherit: true, enum: []string{"SENSITIVE", "INSENSITIVE"}},
		field{name: "share_type", typ: tStr, enum: []string{"GENERIC", "MULTIPROTOCOL", "NFS", "SMB", "APPS"}, def: "GENERIC"},
		field{name: "encryption_options", typ: tObj},
		field{name: "encryption", typ: tBool, def: false},
		field{name: "inherit_encryption", typ: tBool, def: true},
		field{name: "create_ancestors", typ: tBool, def: false},
	)
	return schema{name: "pool_dataset_create", fields: f, pydantic: pyd}
}

// dsProp maps an API attribute of create/update to the ZFS property it
// sets (POOL_DS_CREATE_PROPERTIES / POOL_DS_UPDATE_PROPERTIES).
type dsProp struct {
	api, zfs    string
	inheritable bool
	createOnly  bool
}

var dsProps = []dsProp{
	{"aclinherit", "aclinherit", true, false},
	{"aclmode", "aclmode", true, false},
	{"acltype", "acltype", true, false},
	{"atime", "atime", true, false},
	{"checksum", "checksum", true, false},
	{"compression", "compression", true, false},
	{"copies", "copies", true, false},
	{"deduplication", "dedup", true, false},
	{"exec", "exec", true, false},
	{"sync", "sync", true, false},
	{"quota", "quota", false, false},
	{"readonly", "readonly", true, false},
	{"recordsize", "recordsize", true, false},
	{"refreservation", "refreservation", false, false},
	{"refquota", "refquota", false, false},
	{"reservation", "reservation", false, false},
	{"snapdev", "snapdev", true, false},
	{"snapdir", "snapdir", true, false},
	{"special_small_block_size", "special_small_blocks", true, false},
	{"volsize", "volsize", false, false},
	{"comments", "org.freenas:description", true, false},
	{"managedby", "org.truenas:managedby", true, false},
	{"quota_warning", "org.freenas:quota_warning", true, false},
	{"quota_critical", "org.freenas:quota_critical", true, false},
	{"refquota_warning", "org.freenas:refquota_warning", true, false},
	{"refquota_critical", "org.freenas:refquota_critical", true, false},
	{"casesensitivity", "casesensitivity", true, true},
	{"xattr", "xattr", true, false},
}

// zfsValue is the value a create/update attribute sets: enums are lower
// case, sizes of 0 (or null) are "none".
func zfsValue(p dsProp, v any) string {
	switch x := v.(type) {
	case nil:
		return "none"
	case int64:
		if x == 0 && (p.zfs == "quota" || p.zfs == "refquota" || p.zfs == "reservation" || p.zfs == "refreservation") {
			return "none"
		}
		return strconv.FormatInt(x, 10)
	case string:
		if isUserProp(p.zfs) || p.zfs == "recordsize" {
			return x
		}
		return lowerASCII(x)
	case bool:
		if x {
			return "on"
		}
		return "off"
	}
	return ""
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
