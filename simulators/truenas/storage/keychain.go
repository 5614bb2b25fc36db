package storage

import (
	"encoding/json"
	"sort"
	"sync"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// The keychain (keychaincredential.*) holds what replication over SSH
// needs: SSH_KEY_PAIR entries (a private and a public key) and
// SSH_CREDENTIALS entries (host, port, username, the id of a key pair and
// the remote host key), as Credentials > Backup Credentials > SSH
// Connections makes them. Only create and query are served: a lab or a
// test seeds credentials the way an administrator does, through the API.

type keychain struct {
	mu   sync.Mutex
	next int64
	rows map[int64]middleware.Row
}

func (s *service) registerKeychain() {
	s.keys = &keychain{next: 1, rows: map[int64]middleware.Row{}}
	s.r.Add(middleware.Method{Name: "keychaincredential.query", Params: []string{"filters", "options"}, Handler: s.keychainQuery})
	s.r.Add(middleware.Method{Name: "keychaincredential.create", Params: []string{"keychain_credential_create"}, Handler: s.keychainCreate})
}

func (s *service) keychainQuery(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 2); err != nil {
		return nil, err
	}
	filters, opts, err := middleware.ParseQuery(params, "keychaincredential_query")
	if err != nil {
		return nil, err
	}
	return middleware.Query(s.keys.list(), filters, opts)
}

func (k *keychain) list() []middleware.Row {
	k.mu.Lock()
	defer k.mu.Unlock()
	ids := make([]int64, 0, len(k.rows))
	for id := range k.rows {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := make([]middleware.Row, len(ids))
	for i, id := range ids {
		out[i] = copyRow(k.rows[id])
	}
	return out
}

// get is keychaincredential.get_of_type: the middleware's CallErrors when
// the id is unknown or of another type.
func (k *keychain) get(id int64, typ string) (args, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	r, ok := k.rows[id]
	if !ok {
		return nil, middleware.Errorf(middleware.ENOENT, "Credential does not exist")
	}
	if r["type"] != typ {
		return nil, middleware.Errorf(middleware.EINVAL, "Credential is not of type %s", typ)
	}
	a, _ := r["attributes"].(map[string]any)
	return args(a), nil
}

func copyRow(r middleware.Row) middleware.Row {
	out := middleware.Row{}
	for k, v := range r {
		if m, ok := v.(map[string]any); ok {
			c := map[string]any{}
			for k2, v2 := range m {
				c[k2] = v2
			}
			v = c
		}
		out[k] = v
	}
	return out
}

// keychainCreate validates like KeychainCredentialService._validate: a
// unique name, the attributes of the type, and for SSH_CREDENTIALS a
// private_key that is the id of an SSH_KEY_PAIR.
func (s *service) keychainCreate(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 1); err != nil {
		return nil, err
	}
	sch := schema{name: "keychain_credential_create", pydantic: s.pydantic(), fields: []field{
		{name: "name", typ: tStr, required: true},
		{name: "type", typ: tStr, required: true, enum: []string{"SSH_KEY_PAIR", "SSH_CREDENTIALS"}},
		{name: "attributes", typ: tObj, required: true},
	}}
	a, err := sch.parse(param(params, 0))
	if err != nil {
		return nil, err
	}
	attrs := a.sub("attributes")
	for _, k := range []string{"port", "private_key", "connect_timeout"} {
		if n, ok := attrs[k].(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				attrs[k] = i
			}
		}
	}
	const p = "keychain_credential_create"
	var errs middleware.ValidationErrors
	add := func(attr, msg string) {
		errs = append(errs, middleware.ValidationError{Attribute: p + "." + attr, Message: msg})
	}
	if a.str("name") == "" {
		add("name", "Empty value not allowed")
	}
	for _, r := range s.keys.list() {
		if r["name"] == a.str("name") {
			add("name", "This name already exists")
		}
	}
	switch a.str("type") {
	case "SSH_KEY_PAIR":
		if attrs.str("private_key") == "" && attrs.str("public_key") == "" {
			add("attributes", "You must specify either public or private key (or both)")
		}
	case "SSH_CREDENTIALS":
		for _, k := range []string{"host", "remote_host_key"} {
			if attrs.str(k) == "" {
				add("attributes."+k, "Field required")
			}
		}
		if id, ok := attrs.int("private_key"); !ok {
			add("attributes.private_key", "Field required")
		} else if _, err := s.keys.get(id, "SSH_KEY_PAIR"); err != nil {
			add("attributes.private_key", err.Error())
		}
		for _, k := range []string{"port", "connect_timeout"} {
			if _, isInt := attrs.int(k); attrs.has(k) && !isInt {
				add("attributes."+k, sch.typeMsg(tInt))
			}
		}
		if _, ok := attrs["port"]; !ok {
			attrs["port"] = int64(22)
		}
		if attrs.str("username") == "" {
			attrs["username"] = "root"
		}
		if _, ok := attrs["connect_timeout"]; !ok {
			attrs["connect_timeout"] = int64(10)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	k := s.keys
	k.mu.Lock()
	id := k.next
	k.next++
	row := middleware.Row{"id": id, "name": a.str("name"), "type": a.str("type"), "attributes": map[string]any(attrs)}
	k.rows[id] = row
	k.mu.Unlock()
	return copyRow(row), nil
}
