package sharing

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"unicode"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// sharing.smb: SMB shares (plugins/smb.py). 25.10 reworked the share
// model: `purpose` took new values (LEGACY_SHARE, ...) and the per-purpose
// settings moved into `options`; `ro`/`abe` became `readonly` and
// `access_based_share_enumeration`.

// Purposes before 25.10 (SMBSharePreset) and from 25.10 (SMBSharePurpose).
var (
	smbPresets  = strs("NO_PRESET", "DEFAULT_SHARE", "TIMEMACHINE", "ENHANCED_TIMEMACHINE", "MULTI_PROTOCOL_NFS", "PRIVATE_DATASETS", "WORM_DROPBOX")
	smbPurposes = strs("DEFAULT_SHARE", "LEGACY_SHARE", "TIMEMACHINE_SHARE", "MULTIPROTOCOL_SHARE", "TIME_LOCKED_SHARE", "PRIVATE_DATASETS_SHARE", "EXTERNAL_SHARE", "VEEAM_REPOSITORY_SHARE")
)

func (s *Service) smbNew() bool { return s.v.AtLeast(25, 10, 0) }

func smbAuditFields() []field {
	return []field{
		{name: "enable", kind: kBool, def: false},
		{name: "watch_list", kind: kStrList, def: []any{}},
		{name: "ignore_list", kind: kStrList, def: []any{}},
	}
}

func smbAuditDefault() map[string]any {
	return map[string]any{"enable": false, "watch_list": []any{}, "ignore_list": []any{}}
}

func (s *Service) smbFields() []field {
	if s.smbNew() {
		return []field{
			{name: "purpose", kind: kStr, enum: smbPurposes, def: "DEFAULT_SHARE"},
			// SmbShareName: its length and characters are checked by
			// smbShareNameError (an AfterValidator), not by field limits.
			{name: "name", kind: kStr, required: true},
			{name: "path", kind: kStr, required: true, minLen: 1},
			{name: "enabled", kind: kBool, def: true},
			{name: "comment", kind: kStr, def: ""},
			{name: "readonly", kind: kBool, def: false},
			{name: "browsable", kind: kBool, def: true},
			{name: "access_based_share_enumeration", kind: kBool, def: false},
			{name: "audit", kind: kObj, sub: smbAuditFields(), def: smbAuditDefault()},
			{name: "options", kind: kAny},
		}
	}
	return []field{
		{name: "purpose", kind: kStr, enum: smbPresets, def: "DEFAULT_SHARE"},
		{name: "path", kind: kStr, required: true},
		{name: "path_suffix", kind: kStr, def: ""},
		{name: "home", kind: kBool, def: false},
		{name: "name", kind: kStr, required: true, maxLen: 80},
		{name: "comment", kind: kStr, def: ""},
		{name: "ro", kind: kBool, def: false},
		{name: "browsable", kind: kBool, def: true},
		{name: "timemachine", kind: kBool, def: false},
		{name: "timemachine_quota", kind: kInt, def: 0},
		{name: "recyclebin", kind: kBool, def: false},
		{name: "guestok", kind: kBool, def: false},
		{name: "abe", kind: kBool, def: false},
		{name: "hostsallow", kind: kStrList, def: []any{}},
		{name: "hostsdeny", kind: kStrList, def: []any{}},
		{name: "aapl_name_mangling", kind: kBool, def: false},
		{name: "acl", kind: kBool, def: true},
		{name: "durablehandle", kind: kBool, def: true},
		{name: "shadowcopy", kind: kBool, def: true},
		{name: "streams", kind: kBool, def: true},
		{name: "fsrvp", kind: kBool, def: false},
		{name: "auxsmbconf", kind: kStr, def: ""},
		{name: "enabled", kind: kBool, def: true},
		{name: "afp", kind: kBool, def: false},
		{name: "audit", kind: kObj, sub: smbAuditFields(), def: smbAuditDefault()},
	}
}

// smbOptionFields are the `options` of each 25.10 purpose.
func smbOptionFields(purpose string) []field {
	mangling := field{name: "aapl_name_mangling", kind: kBool, def: false}
	vuid := field{name: "vuid", kind: kStr, null: true, minLen: 1}
	schema := field{name: "dataset_naming_schema", kind: kStr, null: true}
	switch purpose {
	case "LEGACY_SHARE":
		return []field{
			{name: "recyclebin", kind: kBool, def: false},
			{name: "path_suffix", kind: kStr, null: true},
			{name: "hostsallow", kind: kStrList, def: []any{}},
			{name: "hostsdeny", kind: kStrList, def: []any{}},
			{name: "guestok", kind: kBool, def: false},
			{name: "streams", kind: kBool, def: true},
			{name: "durablehandle", kind: kBool, def: true},
			{name: "shadowcopy", kind: kBool, def: true},
			{name: "fsrvp", kind: kBool, def: false},
			{name: "home", kind: kBool, def: false},
			{name: "acl", kind: kBool, def: true},
			{name: "afp", kind: kBool, def: false},
			{name: "timemachine", kind: kBool, def: false},
			{name: "timemachine_quota", kind: kInt, def: 0, min: intp(0)},
			mangling, vuid,
			{name: "auxsmbconf", kind: kStr, def: ""},
		}
	case "TIMEMACHINE_SHARE":
		return []field{
			{name: "timemachine_quota", kind: kInt, def: 0, min: intp(0)},
			{name: "auto_snapshot", kind: kBool, def: false},
			{name: "auto_dataset_creation", kind: kBool, def: false},
			schema, vuid,
		}
	case "TIME_LOCKED_SHARE":
		return []field{{name: "grace_period", kind: kInt, def: 900, min: intp(60), max: intp(86400 * 180)}, mangling}
	case "PRIVATE_DATASETS_SHARE":
		return []field{schema, {name: "auto_quota", kind: kInt, def: 0, min: intp(0)}, mangling}
	case "EXTERNAL_SHARE":
		return []field{{name: "remote_path", kind: kStrList, required: true, minLen: 1}}
	case "VEEAM_REPOSITORY_SHARE":
		return nil
	}
	return []field{mangling} // DEFAULT_SHARE, MULTIPROTOCOL_SHARE
}

func (s *Service) smbArg(verb string) dialect {
	if s.smbNew() {
		return pydantic("data")
	}
	return oldSchema("sharingsmb_" + verb)
}

func (s *Service) registerSMB(r *middleware.Registry) {
	s.addCRUD(r, crud{
		ns: nsSMB, verbose: "SharingSMB",
		view:   func(row middleware.Row, _ middleware.QueryOptions) middleware.Row { return s.smbView(row) },
		create: s.smbCreate, createParams: []string{"data"},
		update: s.smbUpdate, updateParams: []string{"id", "data"},
		del: s.smbDelete, delParams: []string{"id"},
	})
}

func (s *Service) smbView(r middleware.Row) middleware.Row {
	r["locked"] = false
	s.pathFields(r, strOf(r["path"]), strOf(r["path"]) != "EXTERNAL")
	if s.v.AtLeast(26, 0, 0) {
		r["tier"] = nil // a licensed feature: null on an unlicensed system
	}
	if !s.smbNew() {
		r["path_local"] = r["path"]
	}
	return r
}

func (s *Service) smbCreate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 1); err != nil {
		return nil, err
	}
	d := s.smbArg("create")
	data, err := objArg(d, params, 0, s.smbFields(), true)
	if err != nil {
		return nil, err
	}
	if s.smbNew() {
		if err := smbModelChecks(d, data); err != nil {
			return nil, err
		}
		if err := s.smbOptions(d, data, params[0], nil); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.smbValidate(data, "sharingsmb_create", 0); err != nil {
		return nil, err
	}
	if !s.smbNew() {
		data["vuid"] = uuid4()
	}
	row, err := s.insert(nsSMB, data)
	if err != nil {
		return nil, err
	}
	return s.smbView(row), nil
}

func (s *Service) smbUpdate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 2); err != nil {
		return nil, err
	}
	d := s.smbArg("update")
	id, err := intArg(d, params, 0, "id")
	if err != nil {
		return nil, err
	}
	data, err := objArg(d, params, 1, s.smbFields(), false)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.instance(nsSMB, "SharingSMB", id)
	if err != nil {
		return nil, err
	}
	if s.smbNew() {
		if err := smbModelChecks(d, data); err != nil {
			return nil, err
		}
		if err := s.smbOptions(d, data, params[1], old); err != nil {
			return nil, err
		}
	}
	if a, ok := data["audit"].(map[string]any); ok {
		merged, _ := old["audit"].(map[string]any)
		if merged == nil {
			merged = smbAuditDefault()
		}
		for k, v := range a {
			merged[k] = v
		}
		data["audit"] = merged
	}
	for k, v := range data {
		old[k] = v
	}
	if err := s.smbValidate(old, "sharingsmb_update", id); err != nil {
		return nil, err
	}
	row, err := s.replace(nsSMB, old)
	if err != nil {
		return nil, err
	}
	return s.smbView(row), nil
}

func (s *Service) smbDelete(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 1); err != nil {
		return nil, err
	}
	id, err := intArg(s.smbArg("delete"), params, 0, "id")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.instance(nsSMB, "SharingSMB", id); err != nil {
		return nil, err
	}
	s.t[nsSMB].remove(id)
	if err := s.commit(nsSMB); err != nil {
		return nil, err
	}
	s.log.Info("SMB share deleted", "id", id)
	return true, nil
}

// smbOptions applies 25.10's model validators: purpose and options come
// together, options are checked against the purpose's model, and null
// options take the purpose's defaults. old is the share being updated.
func (s *Service) smbOptions(d dialect, data middleware.Row, raw json.RawMessage, old middleware.Row) error {
	var given map[string]json.RawMessage
	_ = json.Unmarshal(raw, &given)
	_, hasPurpose := given["purpose"]
	optRaw, hasOpts := given["options"]
	// The entry's "before" validator first copies a given purpose into
	// options (so a purpose alone is options {purpose}: the purpose's
	// defaults), then insists on purpose when options are given, and
	// writes purpose into options as the discriminator: every options
	// model carries `purpose`, whatever the client put there is replaced
	// (and, excluded from the model's output, never shown).
	switch {
	case hasOpts && !hasPurpose:
		return middleware.Invalid(d.attr, "Value error, You must set `purpose` if you set `options`.")
	case !hasPurpose && old != nil:
		return nil // options unchanged
	}
	purpose := strOf(data["purpose"])
	path := strOf(data["path"])
	if old != nil && path == "" {
		path = strOf(old["path"])
	}
	if purpose == "EXTERNAL_SHARE" && path != "EXTERNAL" {
		return middleware.Invalid(d.attr, "Value error, You must set `path` to \"EXTERNAL\" for external shares.")
	}
	if hasOpts && strings.TrimSpace(string(optRaw)) != "null" {
		var o map[string]json.RawMessage
		if json.Unmarshal(optRaw, &o) == nil {
			if _, has := o["purpose"]; has {
				delete(o, "purpose")
				optRaw, _ = json.Marshal(o)
			}
		}
	}
	if !hasOpts {
		optRaw = json.RawMessage("{}")
	}
	if strings.TrimSpace(string(optRaw)) == "null" {
		if purpose == "EXTERNAL_SHARE" {
			return middleware.Invalid(d.attr, "Value error, External shares require explicit options configuration")
		}
		optRaw = json.RawMessage("{}")
	}
	opts, errs := decode(pydantic(d.at("options."+purpose)), optRaw, smbOptionFields(purpose), true)
	if len(errs) > 0 {
		return errs
	}
	if _, ok := opts["vuid"]; ok && opts["vuid"] == nil {
		opts["vuid"] = uuid4() // a null vuid asks for a new one
	}
	data["options"] = opts
	return nil
}

// smbInvalidChars are the characters MS-FSCC forbids in a share name.
const smbInvalidChars = `\/[]:|<>+=;,*?"`

// smbValidate runs SharingSMBService.validate; self is the id being
// updated (0 on create). Callers hold s.mu.
func (s *Service) smbValidate(data middleware.Row, schema string, self int) error {
	var errs middleware.ValidationErrors
	add := func(attr, msg string) {
		errs = append(errs, middleware.ValidationError{Attribute: schema + "." + attr, Message: msg})
	}
	name := strOf(data["name"])
	if b, _ := data["home"].(bool); b {
		for _, other := range s.t[nsSMB].rows {
			if h, _ := other["home"].(bool); h && intOf(other["id"]) != self {
				add("home", "Only one share is allowed to be a home share.")
				break
			}
		}
	}
	for _, other := range s.t[nsSMB].rows {
		if intOf(other["id"]) != self && strings.EqualFold(strOf(other["name"]), name) {
			add("name", "Share names are case-insensitive and must be unique")
			break
		}
	}
	if p := strOf(data["path"]); !(s.smbNew() && p == "EXTERNAL") {
		host, inPool := s.model.HostPath(p)
		switch {
		case !inPool:
			add("path", "The path must reside within a pool mount point")
		default:
			if st, err := os.Stat(host); err != nil {
				add("path", "Path does not exist.")
			} else if !st.IsDir() {
				add("path", "The path must be a directory")
			}
		}
	}
	if !s.smbNew() {
		s.smbOldNameChecks(name, add)
	}
	const aapl = "Apple SMB2/3 protocol extension support is required by this parameter. " +
		"This feature may be enabled in the general SMB server configuration."
	if !s.smbNew() {
		// smb.config's aapl_extensions is off on a fresh system
		if b, _ := data["afp"].(bool); b {
			add("afp", aapl)
		}
		tm, _ := data["timemachine"].(bool)
		if p := strOf(data["purpose"]); tm || p == "TIMEMACHINE" || p == "ENHANCED_TIMEMACHINE" {
			add("timemachine", aapl)
		}
	} else if strOf(data["purpose"]) == "VEEAM_REPOSITORY_SHARE" {
		add("purpose", "Veeam repository shares require a TrueNAS enterprise license.")
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// smbOldNameChecks are the plugin's share name checks up to 25.04 (25.10
// moved them into the SmbShareName type: smbModelChecks).
func (s *Service) smbOldNameChecks(name string, add func(attr, msg string)) {
	switch strings.ToLower(name) {
	case "global", "printers", "homes":
		add("name", name+" is a reserved section name, please select another one")
	}
	var bad []string
	for _, ch := range smbInvalidChars {
		if strings.ContainsRune(name, ch) {
			bad = append(bad, string(ch))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		add("name", "Share name contains the following invalid characters: "+strings.Join(bad, ", "))
	}
	for _, ch := range name {
		if ch < 0x20 || ch == 0x7f {
			add("name", "Share name contains unicode control characters.")
			break
		}
	}
}

// smbModelChecks run what 25.10's SmbShareEntry model checks on its own
// fields: the share name (utils/smb.py validate_smb_share_name, an
// AfterValidator, so one "Value error, ..." for the first rule broken).
func smbModelChecks(d dialect, data middleware.Row) error {
	name, given := data["name"].(string)
	if !given {
		return nil
	}
	if msg := smbShareNameError(name); msg != "" {
		return middleware.Invalid(d.at("name"), "Value error, %s", msg)
	}
	return nil
}

// smbNewInvalidChars are 25.10's forbidden share name characters (MS-FSCC
// plus '%').
const smbNewInvalidChars = `%<>*?|/\+=;:",[]`

// smbShareNameError is validate_smb_share_name's complaint, "" for a good
// name. The middleware lists invalid characters in set order (which Python
// randomises); the simulator sorts them.
func smbShareNameError(name string) string {
	switch {
	case name == "":
		return "Share name must contain at least one character"
	case len([]rune(name)) > 80:
		return name + ": share name must not exceed 80 characters in length"
	}
	switch strings.ToLower(name) {
	case "global", "printers", "homes", "admin$", "ipc$":
		return name + ": share name is reserved."
	}
	var bad []string
	for _, ch := range smbNewInvalidChars {
		if strings.ContainsRune(name, ch) {
			bad = append(bad, string(ch))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return name + ": share name contains the following invalid characters: " + strings.Join(bad, ", ")
	}
	for _, ch := range name {
		if unicode.IsControl(ch) {
			return name + ": share name contains unicode control characters"
		}
	}
	return ""
}
