package sharing

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// nvmet.host (host.py): host NQNs, optionally with DH-HMAC-CHAP keys
// (never logged), granted subsystems through nvmet.host_subsys
// (host_subsys.py).

var (
	dhchapHashes = strs("SHA-256", "SHA-384", "SHA-512")
	dhchapGroups = strs("2048-BIT", "3072-BIT", "4096-BIT", "6144-BIT", "8192-BIT")
)

func (s *Service) registerHost(r *middleware.Registry) {
	s.nvCRUD(r, nvSpec{
		ns: nsHost, verbose: "NVMetHost", obj: "host",
		fields: func(create bool) []field {
			f := []field{
				{name: "hostnqn", kind: kStr, required: create},
				{name: "dhchap_key", kind: kStr, null: true, minLen: 1},
				{name: "dhchap_ctrl_key", kind: kStr, null: true, minLen: 1},
				{name: "dhchap_dhgroup", kind: kStr, null: true, enum: dhchapGroups},
				{name: "dhchap_hash", kind: kStr, enum: dhchapHashes, def: "SHA-256"},
			}
			if s.v.AtLeast(26, 0, 0) {
				f = append(f, field{name: "description", kind: kStr, def: ""})
			}
			return f
		},
		model: func(d dialect, data middleware.Row, create bool) error {
			if nqn, ok := data["hostnqn"].(string); ok {
				if err := checkNQN(d, "hostnqn", nqn); err != nil {
					return err
				}
			}
			_, keyGiven := data["dhchap_key"]
			if data["dhchap_ctrl_key"] != nil && data["dhchap_key"] == nil && (create || keyGiven) {
				return middleware.Invalid(d.attr, "Value error, Cannot configure bi-directional authentication without setting dhchap_key")
			}
			return nil
		},
		validate: func(data, old middleware.Row, schema string) error {
			self := intOf(old["id"])
			var errs middleware.ValidationErrors
			for _, h := range s.t[nsHost].rows {
				if intOf(h["id"]) != self && strOf(h["hostnqn"]) == strOf(data["hostnqn"]) {
					errs = append(errs, middleware.ValidationError{Attribute: schema + ".hostnqn", Message: "Object with this hostnqn already exists"})
				}
			}
			for _, k := range []string{"dhchap_key", "dhchap_ctrl_key"} {
				if key, ok := data[k].(string); ok {
					if msg := dhchapKeyError(key); msg != "" {
						errs = append(errs, middleware.ValidationError{Attribute: schema + "." + k, Message: msg})
					}
				}
			}
			if len(errs) > 0 {
				return errs
			}
			return nil
		},
		deleteOpts: []field{{name: "force", kind: kBool, def: false}},
		beforeDelete: func(row, opts middleware.Row) error {
			id := intOf(row["id"])
			grants := s.t[nsHostSubsys].find(func(r middleware.Row) bool { return intOf(r["host_id"]) == id })
			if force, _ := opts["force"].(bool); !force && len(grants) > 0 {
				var names []string
				for _, g := range grants {
					if sub := s.t[nsSubsys].get(intOf(g["subsys_id"])); sub != nil {
						names = append(names, strOf(sub["name"]))
					}
				}
				msg := "Host " + strOf(row["hostnqn"]) + " used by 1 subsystem: " + join(names, ",")
				if len(grants) > 1 {
					postfix := ""
					if len(names) > 3 {
						names, postfix = names[:3], ",..."
					}
					msg = "Host " + strOf(row["hostnqn"]) + " used by " + itoa(len(grants)) + " subsystems: " + join(names, ",") + postfix
				}
				return middleware.Invalid("nvmet_host_delete.id", "%s", msg)
			}
			for _, g := range grants {
				s.t[nsHostSubsys].remove(intOf(g["id"]))
			}
			return nil
		},
		touches: []string{nsHostSubsys},
	})
	addConst(r, "nvmet.host.dhchap_dhgroup_choices", dhchapGroups)
	addConst(r, "nvmet.host.dhchap_hash_choices", dhchapHashes)
	r.Add(middleware.Method{Name: "nvmet.host.generate_key", Params: []string{"dhchap_hash", "nqn"}, Handler: func(c *middleware.Call, params []json.RawMessage) (any, error) {
		if err := argCount(params, 2); err != nil {
			return nil, err
		}
		hash := "SHA-256"
		if given(params, 0) {
			if json.Unmarshal(params[0], &hash) != nil || !inEnum(hash, dhchapHashes) {
				return nil, middleware.Invalid("dhchap_hash", "%s", enumMsg(pydantic(""), hash, dhchapHashes))
			}
		}
		return generateDHCHAPKey(hash), nil
	}})
}

// hmacIDs are nvme-cli's HMAC numbers, which the middleware also stores.
var hmacIDs = map[string]int{"SHA-256": 1, "SHA-384": 2, "SHA-512": 3}

// generateDHCHAPKey makes a key as `nvme gen-dhchap-key -hmac=N` prints it:
// DHHC-1:0N:base64(secret || crc32(secret) little-endian):
func generateDHCHAPKey(hash string) string {
	id := hmacIDs[hash]
	secret := make([]byte, 16+16*id) // 32, 48 or 64 bytes
	rand.Read(secret)                // never fails since Go 1.24
	buf := binary.LittleEndian.AppendUint32(append([]byte(nil), secret...), crc32.ChecksumIEEE(secret))
	return "DHHC-1:0" + itoa(id) + ":" + base64.StdEncoding.EncodeToString(buf) + ":"
}

// dhchapKeyError is the host service's check of a key's format.
func dhchapKeyError(key string) string {
	prefix := key
	if len(prefix) > 10 {
		prefix = prefix[:10]
	}
	want := map[string]int{"DHHC-1:01:": 36, "DHHC-1:02:": 52, "DHHC-1:03:": 68}
	switch prefix {
	case "DHHC-1:00:":
		if !strings.HasSuffix(key, ":") {
			return `Unexpected key termination. Use "nvme gen-dhchap-key" to generate.`
		}
	case "DHHC-1:01:", "DHHC-1:02:", "DHHC-1:03:":
		parts := strings.Split(key, ":")
		b, err := base64.StdEncoding.DecodeString(parts[2])
		if err != nil || len(b) != want[prefix] {
			return "Expected key length of " + itoa(want[prefix]-4)
		}
	default:
		return `Unexpected key format. Use "nvme gen-dhchap-key" to generate.`
	}
	return ""
}

// hostRef is a host as host_subsys embeds it. Callers hold s.mu.
func (s *Service) hostRef(id int) any {
	if r := s.t[nsHost].get(id); r != nil {
		return clone(r)
	}
	return nil
}

func (s *Service) registerHostSubsys(r *middleware.Registry) {
	s.nvCRUD(r, nvSpec{
		ns: nsHostSubsys, verbose: "NVMetHostSubsys", obj: "host_subsys",
		fields: func(create bool) []field {
			return []field{{name: "host_id", kind: kInt, required: create}, {name: "subsys_id", kind: kInt, required: create}}
		},
		validate: func(data, old middleware.Row, schema string) error {
			return s.linkValidate(nsHostSubsys, data, old, schema, "host_id", nsHost, "No host with ID ")
		},
		view: func(row middleware.Row, _ middleware.QueryOptions) middleware.Row {
			row["host"] = s.hostRef(intOf(row["host_id"]))
			row["subsys"] = s.subsysRef(intOf(row["subsys_id"]))
			return row
		},
		hidden: []string{"host_id", "subsys_id"},
	})
}
