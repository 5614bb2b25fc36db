package infinia

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

// sectionKey holds one map entry per service account, as in DDN's driver.
const sectionKey = "accounts"

// Defaults DDN's driver documents.
const (
	defaultDataPort = 4420
	defaultInsecure = true
)

// account is one accounts.<cluster>/<tenant>/<account> section.
type account struct {
	key                   string // "clu1/red/csiAccount"
	cluster, tenant, name string
	apis                  []string
	password              string
	zone                  string
	insecure              bool
	instances             []int
	dataPort              int
	owner, group, perms   string
	timeout               time.Duration
	maxConns              int
	caCert                []byte
}

// apiConfig is the client config of the account's own credentials.
func (a *account) apiConfig() api.Config {
	return api.Config{
		APIs: a.apis, User: a.name, Level: a.cluster + "/" + a.tenant, Password: a.password,
		InsecureSkipVerify: a.insecure, CACert: a.caCert, Timeout: a.timeout, MaxConnsPerHost: a.maxConns,
	}
}

// fingerprint identifies a client config without keeping its password in
// a readable form (it is a map key and may be compared across reloads).
func fingerprint(c api.Config) string {
	h := sha256.New()
	for _, s := range append(append([]string{}, c.APIs...), "\x01", c.User, c.Level, c.Password,
		strconv.FormatBool(c.InsecureSkipVerify), string(c.CACert), c.Timeout.String(), strconv.Itoa(c.MaxConnsPerHost)) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// accountSet is every configured account; it is replaced whole when the
// config file changes.
type accountSet struct {
	byKey map[string]*account
	keys  []string // sorted
}

// Validate reports every problem in an infinia-nvmeof config, each naming
// its key. It never panics, whatever types the tree holds.
func Validate(cfg config.Tree) []config.Problem {
	_, ps := parseAccounts(cfg)
	return ps
}

func parseAccounts(cfg config.Tree) (*accountSet, []config.Problem) {
	set := &accountSet{byKey: map[string]*account{}}
	var ps []config.Problem
	raw, present := cfg.Lookup(sectionKey)
	section := cfg.Sub(sectionKey)
	switch {
	case !present || raw == nil:
		return nil, []config.Problem{{Key: sectionKey, Msg: "required: one section per Infinia service account, " +
			"e.g. accounts: {clu1/red/csiAccount: {apis: [https://infinia.example.com:443], password: ...}}"}}
	case section == nil:
		return nil, []config.Problem{{Key: sectionKey, Msg: "must be a map of <cluster>/<tenant>/<account> to settings"}}
	case len(section) == 0:
		return nil, []config.Problem{{Key: sectionKey, Msg: "no account is configured"}}
	}
	for key, v := range section {
		prefix := sectionKey + "." + key
		if why := checkAccountKey(key); why != "" {
			ps = append(ps, config.Problem{Key: prefix, Msg: why})
			continue
		}
		m := section.Sub(key)
		if m == nil {
			ps = append(ps, config.Problem{Key: prefix, Msg: fmt.Sprintf("must be a map of settings (apis, password, ...), got %v", v)})
			continue
		}
		a, aps := parseAccount(key, m)
		for _, p := range aps {
			p.Key = prefix + "." + p.Key
			ps = append(ps, p)
		}
		set.byKey[key] = a
		set.keys = append(set.keys, key)
	}
	sort.Strings(set.keys)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Key < ps[j].Key })
	if len(ps) > 0 {
		return nil, ps
	}
	return set, nil
}

// checkAccountKey returns why key is not <cluster>/<tenant>/<account>, or "".
func checkAccountKey(key string) string {
	parts := strings.Split(key, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return fmt.Sprintf("the account key must be <cluster>/<tenant>/<service account>, e.g. clu1/red/csiAccount, got %q", key)
	}
	if strings.ContainsAny(key, ": \t\n") {
		return fmt.Sprintf("the account key %q must not contain ':' or white space (volume handles use ':' to separate it)", key)
	}
	return ""
}

func parseAccount(key string, m config.Tree) (*account, []config.Problem) {
	r := config.NewReader(m)
	parts := strings.Split(key, "/")
	a := &account{key: key, cluster: parts[0], tenant: parts[1], name: parts[2], dataPort: defaultDataPort}

	badAPI := false
	for _, item := range r.List("apis") {
		for e := range strings.SplitSeq(item, ",") {
			if e = strings.TrimSpace(e); e == "" {
				continue
			}
			if _, err := api.ParseEndpoint(e); err != nil {
				r.Add("apis", "%q %v", shownEntry(e), err)
				badAPI = true
				continue
			}
			a.apis = append(a.apis, e)
		}
	}
	if len(a.apis) == 0 && !badAPI {
		r.Add("apis", "required: the Infinia REST API endpoint(s), e.g. [https://infinia.example.com:443]")
	}
	a.password = r.Required("password", "the service account's password")
	a.zone = r.Str("zone")
	a.insecure = r.Bool("insecureSkipVerify", defaultInsecure)

	for i, s := range r.List("default_instance_ids") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			r.Add(fmt.Sprintf("default_instance_ids[%d]", i), "must be an instance id (a positive integer), got %q", s)
			continue
		}
		a.instances = append(a.instances, n)
	}
	if s := r.Str("default_data_port"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 65535 {
			r.Add("default_data_port", "must be a TCP port (1-65535), got %q", s)
		}
		a.dataPort = n
	}
	a.owner, a.group = r.Str("owneruid"), r.Str("groupuid")
	if key, why := checkIDs(a.owner, a.group); why != "" {
		r.Add(key, "%s", why)
	}
	if v, ok := m.Lookup("perms"); ok && v != nil {
		s, isString := v.(string)
		if !isString {
			r.Add("perms", "must be a quoted octal string such as \"0750\" (an unquoted number is read as decimal or octal depending on its digits), got %v", v)
		} else if why := checkPerms(s); why != "" {
			r.Add("perms", "%s", why)
		}
		a.perms = strings.TrimSpace(s)
	}

	if s := r.Str("timeout"); s != "" {
		d, err := parseTimeout(s)
		if err != nil {
			r.Add("timeout", "%v", err)
		}
		a.timeout = d
	}
	if s := r.Str("maxConnsPerHost"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1024 {
			r.Add("maxConnsPerHost", "must be a number of connections from 1 to 1024, got %q", s)
		}
		a.maxConns = n
	}
	if pem := r.Str("caCert"); pem != "" {
		if !strings.Contains(pem, "-----BEGIN CERTIFICATE-----") {
			r.Add("caCert", "must be a PEM certificate (-----BEGIN CERTIFICATE-----...)")
		}
		a.caCert = []byte(pem)
	}
	return a, r.Problems()
}

// shownEntry is an apis entry as an error may quote it: credentials in
// its authority (user:password@) are replaced, since config errors end up
// in logs.
func shownEntry(e string) string {
	start := 0
	if i := strings.Index(e, "://"); i >= 0 {
		start = i + len("://")
	}
	end := len(e)
	if i := strings.IndexAny(e[start:], "/?#"); i >= 0 {
		end = start + i
	}
	if at := strings.LastIndex(e[start:end], "@"); at >= 0 {
		return e[:start] + "<redacted>" + e[start+at:]
	}
	return e
}

// checkIDs checks owneruid/groupuid: numeric, and set together (DDN's
// rule). It returns the key at fault and why, or "" when both are fine.
func checkIDs(owner, group string) (key, why string) {
	for _, f := range []struct{ key, v string }{{"owneruid", owner}, {"groupuid", group}} {
		if f.v == "" {
			continue
		}
		if n, err := strconv.Atoi(f.v); err != nil || n < 0 {
			return f.key, fmt.Sprintf("must be a numeric id, got %q", f.v)
		}
	}
	switch {
	case owner != "" && group == "":
		return "groupuid", "must be set together with owneruid (" + owner + ")"
	case owner == "" && group != "":
		return "owneruid", "must be set together with groupuid (" + group + ")"
	}
	return "", ""
}

// checkPerms checks an octal permission string ("0750", "2775").
func checkPerms(s string) string {
	s = strings.TrimSpace(s)
	n, err := strconv.ParseUint(strings.TrimPrefix(s, "0o"), 8, 32)
	if s == "" || err != nil || n > 0o7777 {
		return fmt.Sprintf("must be an octal mode such as \"0750\" (at most 7777), got %q", s)
	}
	return ""
}

// parseTimeout reads a Go duration ("30s", "1m") or a number of seconds.
func parseTimeout(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 {
			return 0, fmt.Errorf("must be positive, got %q", s)
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("must be a duration such as \"30s\" or a number of seconds, got %q", s)
	}
	return d, nil
}
