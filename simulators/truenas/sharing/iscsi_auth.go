package sharing

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// iscsi.auth (plugins/iscsi_/auth.py): CHAP credentials, grouped by tag
// and referenced by target groups. Secrets are never logged.

func (s *Service) authFields() []field {
	f := []field{
		{name: "tag", kind: kInt, required: true},
		{name: "user", kind: kStr, required: true},
		{name: "secret", kind: kStr, required: true},
		{name: "peeruser", kind: kStr, def: ""},
		{name: "peersecret", kind: kStr, def: ""},
	}
	if s.v.AtLeast(25, 4, 0) {
		f = append(f, field{name: "discovery_auth", kind: kStr, enum: strs("NONE", "CHAP", "CHAP_MUTUAL"), def: "NONE"})
	}
	return f
}

// authByTag returns the credentials of a tag. Callers hold s.mu.
func (s *Service) authByTag(tag int) []middleware.Row {
	return s.t[nsAuth].find(func(r middleware.Row) bool { return intOf(r["tag"]) == tag })
}

func (s *Service) registerAuth(r *middleware.Registry) {
	arg := func(verb string) dialect { return s.iscsiArg("iscsi_auth_"+verb, "data") }
	s.addCRUD(r, crud{
		ns: nsAuth, verbose: "iSCSITargetAuthCredential",
		createParams: []string{"data"},
		create: func(c *middleware.Call, params []json.RawMessage) (any, error) {
			if err := argCount(params, 1); err != nil {
				return nil, err
			}
			data, err := objArg(arg("create"), params, 0, s.authFields(), true)
			if err != nil {
				return nil, err
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if err := s.authValidate(data, "iscsi_auth_create", 0); err != nil {
				return nil, err
			}
			return s.insert(nsAuth, data)
		},
		updateParams: []string{"id", "data"},
		update: func(c *middleware.Call, params []json.RawMessage) (any, error) {
			if err := argCount(params, 2); err != nil {
				return nil, err
			}
			id, err := intArg(arg("update"), params, 0, "id")
			if err != nil {
				return nil, err
			}
			data, err := objArg(arg("update"), params, 1, s.authFields(), false)
			if err != nil {
				return nil, err
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			old, err := s.instance(nsAuth, "iSCSITargetAuthCredential", id)
			if err != nil {
				return nil, err
			}
			oldTag := intOf(old["tag"])
			for k, v := range data {
				old[k] = v
			}
			if err := s.authValidate(old, "iscsi_auth_update", id); err != nil {
				return nil, err
			}
			if intOf(old["tag"]) != oldTag && s.lastOfTag(id, oldTag) {
				if users := s.authUsers(oldTag); users != "" {
					return nil, middleware.Invalid("iscsi_auth_update.tag", "Authorized access of %d is being used by following target(s): %s", id, users)
				}
			}
			return s.replace(nsAuth, old)
		},
		delParams: []string{"id"},
		del: func(c *middleware.Call, params []json.RawMessage) (any, error) {
			if err := argCount(params, 1); err != nil {
				return nil, err
			}
			id, err := intArg(arg("delete"), params, 0, "id")
			if err != nil {
				return nil, err
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			old, err := s.instance(nsAuth, "iSCSITargetAuthCredential", id)
			if err != nil {
				return nil, err
			}
			if tag := intOf(old["tag"]); s.lastOfTag(id, tag) {
				if users := s.authUsers(tag); users != "" {
					return nil, middleware.Errorf(middleware.EFAULT, "Authorized access of %d is being used by following target(s): %s", id, users)
				}
			}
			s.t[nsAuth].remove(id)
			if err := s.commit(nsAuth); err != nil {
				return nil, err
			}
			s.log.Info("deleted", "namespace", nsAuth, "id", id)
			return true, nil
		},
	})
}

// lastOfTag reports whether no credential but id has tag. Callers hold s.mu.
func (s *Service) lastOfTag(id, tag int) bool {
	for _, r := range s.authByTag(tag) {
		if intOf(r["id"]) != id {
			return false
		}
	}
	return true
}

// authUsers lists the ids of targets whose groups use a tag ("" if none).
// Callers hold s.mu.
func (s *Service) authUsers(tag int) string {
	var ids []int
	for _, t := range s.t[nsTarget].rows {
		for _, g := range objs(t["groups"]) {
			if g["auth"] != nil && intOf(g["auth"]) == tag {
				ids = append(ids, intOf(t["id"]))
			}
		}
	}
	sort.Ints(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = itoa(id)
	}
	return strings.Join(parts, ", ")
}

// authValidate is iSCSITargetAuthCredentialService.validate. Callers hold s.mu.
func (s *Service) authValidate(data middleware.Row, schema string, self int) error {
	var errs middleware.ValidationErrors
	add := func(attr, msg string) {
		errs = append(errs, middleware.ValidationError{Attribute: schema + "." + attr, Message: msg})
	}
	secret, peerUser, peerSecret := strOf(data["secret"]), strOf(data["peeruser"]), strOf(data["peersecret"])
	discovery := strOf(data["discovery_auth"])
	checkSecret := func(v, attr, title string) {
		if len(v) < 12 || len(v) > 16 {
			add(attr, title+" must be between 12 and 16 characters.")
		}
		if v != strings.TrimSpace(v) {
			add(attr, title+" contains leading or trailing space.")
		}
		if strings.Contains(v, "#") {
			add(attr, title+" contains invalid characters: #")
		}
	}
	if peerUser == "" && peerSecret != "" {
		add("peersecret", "The peer user is required if you set a peer secret.")
	}
	checkSecret(secret, "secret", "Secret")
	if peerUser != "" {
		switch {
		case peerSecret == "":
			add("peersecret", "The peer secret is required if you set a peer user.")
		case peerSecret == secret:
			add("peersecret", "The peer secret cannot be the same as user secret.")
		default:
			checkSecret(peerSecret, "peersecret", "Peer Secret")
		}
		if discovery == "CHAP_MUTUAL" {
			for _, r := range s.t[nsAuth].rows {
				if intOf(r["id"]) != self && strOf(r["discovery_auth"]) == "CHAP_MUTUAL" && strOf(r["peeruser"]) != "" {
					add("discovery_auth", "Cannot specify CHAP_MUTUAL as only one such entry is permitted.")
					break
				}
			}
		}
	} else if discovery == "CHAP_MUTUAL" {
		add("discovery_auth", "Cannot specify CHAP_MUTUAL if peer_user has not been defined.")
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
