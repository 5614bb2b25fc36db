package storage

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// validDatasetName is validate_dataset_name (libzfs zfs_name_valid for a
// filesystem or volume).
func validDatasetName(name string) bool {
	if name == "" || len(name) > 255 || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") {
		return false
	}
	for i, comp := range strings.Split(name, "/") {
		if comp == "" || comp == "." || comp == ".." {
			return false
		}
		for j := 0; j < len(comp); j++ {
			c := comp[j]
			ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
				c == '-' || c == '_' || c == '.' || c == ':' || c == ' '
			if !ok {
				return false
			}
		}
		if i == 0 && !(comp[0] >= 'a' && comp[0] <= 'z' || comp[0] >= 'A' && comp[0] <= 'Z') {
			return false // pool names start with a letter
		}
	}
	return true
}

func propRaw(in *zfsmodel.Info, p string) string {
	if in == nil {
		return ""
	}
	return in.Props[p].Value
}

func propInt(in *zfsmodel.Info, p string) int64 {
	n, _ := strconv.ParseInt(propRaw(in, p), 10, 64)
	return n
}

// parentInfo is the parent of a dataset being created or updated, as the
// validation reads it: a volume's checks want the parent's available
// space measured now (Get); a filesystem's read only its type and
// fsValidationProps, so the parent's directory (one entry per child) is
// not measured for them, nor its other properties read (issue 16).
func (s *service) parentInfo(name, typ string) (*zfsmodel.Info, error) {
	if typ == "VOLUME" {
		return s.m.Get(name)
	}
	return s.m.PeekProps(name, fsValidationProps...)
}

// fsValidationProps are the native properties a filesystem's validation
// reads of its parent (readonly on create, the ACL settings INHERIT
// resolves to) and of the dataset an update changes (the ACL settings;
// user properties come with every read).
var fsValidationProps = []string{"readonly", "acltype", "aclmode"}

// dsValidation is the shared part of create and update validation
// (PoolDatasetService.__common_validation). a is modified as the
// middleware modifies data (the default volblocksize, user_properties
// turned into user_properties_update). It returns true when the caller
// must stop (the middleware's early verrors.check()).
type dsValidation struct {
	s       *service
	attr    string // "pool_dataset_create" or "pool_dataset_update"
	a       args
	typ     string
	name    string
	create  bool
	parent  *zfsmodel.Info // nil when the parent does not exist
	parName string         // the parent looked up
	cur     *zfsmodel.Info // the dataset (update)
	errs    middleware.ValidationErrors
}

func (v *dsValidation) add(attr, format string, args ...any) {
	v.errs = append(v.errs, middleware.ValidationError{Attribute: v.attr + "." + attr, Message: fmt.Sprintf(format, args...)})
}

func (v *dsValidation) run() {
	pyd := v.s.pydantic()
	if v.parent == nil {
		switch {
		case v.a.boolean("create_ancestors"):
			v.add("name", "Please specify a pool which exists for the dataset/volume to be created")
		case !pyd:
			v.add("name", "Parent dataset does not exist for specified name")
		case !strings.Contains(v.parName, "/"):
			v.add("name", "zpool (%s) does not exist.", v.parName)
		default:
			v.add("name", "Parent dataset (%s) does not exist.", v.parName)
		}
		return
	}
	if v.create && propRaw(v.parent, "readonly") == "on" {
		first, _, _ := strings.Cut(v.name, "/")
		v.add("readonly", "Turn off readonly mode on %s to create %s", v.parent.Name, first)
		return
	}
	switch v.typ {
	case "FILESYSTEM":
		v.filesystem(pyd)
	case "VOLUME":
		v.volume(pyd)
	}
	if !v.create {
		v.userPropsUpdate()
	}
}

func (v *dsValidation) filesystem(pyd bool) {
	eff := map[string]string{}
	for _, k := range []string{"acltype", "aclmode"} {
		val := v.a.str(k)
		if val == "" {
			val = "INHERIT"
			if v.cur != nil {
				val = strings.ToUpper(propRaw(v.cur, k))
			}
		}
		if val == "INHERIT" {
			val = strings.ToUpper(propRaw(v.parent, k))
		}
		eff[k] = val
	}
	switch {
	case (eff["acltype"] == "POSIX" || eff["acltype"] == "OFF") && eff["aclmode"] != "DISCARD":
		v.add("aclmode", "Must be set to DISCARD when acltype is POSIX or OFF")
	case eff["acltype"] == "NFSV4" && eff["aclmode"] == "DISCARD":
		v.add("aclmode", "DISCARD aclmode may not be set for NFSv4 acl type")
	}
	for _, k := range volOnly {
		if v.a.has(k) {
			v.add(k, "This field is not valid for FILESYSTEM")
		}
	}
	if n, ok := v.a.int("special_small_block_size"); ok {
		if pyd {
			if n < 0 || n > 16<<20 {
				v.add("special_small_block_size", "This field must be from zero to 16M")
			}
		} else if !(n == 0 || n >= 512 && n <= 1<<20 && n&(n-1) == 0) {
			v.add("special_small_block_size", "This field must be zero or a power of 2 from 512B to 1M")
		}
	}
	if rs := v.a.str("recordsize"); rs != "" && rs != "INHERIT" && !contains(recordsizeChoices, rs) {
		v.add("recordsize", "%s is an invalid recordsize.", pyRepr(rs))
	}
}

func (v *dsValidation) volume(pyd bool) {
	if v.create && !v.a.has("volblocksize") {
		// OpenZFS 2.2 default, which the middleware passes explicitly
		v.a["volblocksize"] = "16K"
	}
	if v.create && !pyd && !v.a.has("volsize") {
		v.add("volsize", "This field is required for VOLUME")
	}
	for _, k := range fsOnly {
		if v.a.has(k) {
			v.add(k, "This field is not valid for VOLUME")
		}
	}
	volsize, ok := v.a.int("volsize")
	if !ok {
		return
	}
	avail := propInt(v.parent, "available")
	if v.cur != nil {
		avail += propInt(v.cur, "used")
	}
	if float64(volsize) > float64(avail)*0.80 && !v.a.boolean("force_size") {
		v.add("volsize", "It is not recommended to use more than 80%% of your available space for VOLUME")
	}
	if bs, ok := volblocksizes[v.a.str("volblocksize")]; ok && volsize%bs != 0 {
		v.add("volsize", "Volume size should be a multiple of volume block size")
	}
}

// userPropsUpdate checks user_properties_update, or turns a full
// user_properties list into updates and removals.
func (v *dsValidation) userPropsUpdate() {
	upd, _ := v.a["user_properties_update"].([]any)
	full, _ := v.a["user_properties"].([]any)
	switch {
	case len(upd) > 0 && len(full) == 0:
		for i, it := range upd {
			p := it.(args)
			at := fmt.Sprintf("user_properties_update.%d", i)
			if p.has("value") && p.boolean("remove") {
				v.add(at+".remove", `When "value" is specified, this cannot be set`)
			} else if !p.has("value") && !p.has("remove") {
				v.add(at+".value", `Either "value" or "remove" must be specified`)
			}
		}
	case len(upd) > 0 && len(full) > 0:
		v.add("user_properties_update", `Should not be specified when "user_properties" are explicitly specified`)
	case len(full) > 0:
		keep := map[string]bool{}
		var out []any
		for _, it := range full {
			p := it.(args)
			keep[p.str("key")] = true
			out = append(out, p)
		}
		for k := range v.cur.Props {
			if isUserProp(k) && !internalUserProps[k] && !keep[k] {
				out = append(out, args{"key": k, "remove": true})
			}
		}
		v.a["user_properties_update"] = out
	}
}
