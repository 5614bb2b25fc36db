package infinia

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

// Secret keys that override an account's connection (StorageClass secrets
// of CreateVolume, DeleteVolume, ControllerPublish/Unpublish and Expand).
const (
	secretAPIs     = "apis"
	secretPassword = "password"
	secretInsecure = "insecureSkipVerify"
)

// withSecrets applies the secret overrides to the account's client config.
// Errors name the secret key, never its value. Endpoints from the secret
// are secret too: the client names them "secret apis entry N" (N counts
// the non-empty entries from 1) in errors and logs.
func withSecrets(a *account, secrets map[string]string) (api.Config, error) {
	cfg := a.apiConfig()
	if v, ok := secrets[secretAPIs]; ok && strings.TrimSpace(v) != "" {
		cfg.APIs = nil
		cfg.SecretAPIs = true
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e == "" {
				continue
			}
			if _, err := api.ParseEndpoint(e); err != nil {
				// The reason is left out: it could quote part of the value.
				return api.Config{}, status.Errorf(codes.InvalidArgument, "secret %s: entry %d is not an endpoint URL (want https://<host>[:port])",
					secretAPIs, len(cfg.APIs)+1)
			}
			cfg.APIs = append(cfg.APIs, e)
		}
	}
	if v := secrets[secretPassword]; v != "" {
		cfg.Password = v
	}
	if v, ok := secrets[secretInsecure]; ok && strings.TrimSpace(v) != "" {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return api.Config{}, status.Errorf(codes.InvalidArgument, "secret %s must be true or false", secretInsecure)
		}
		cfg.InsecureSkipVerify = b
	}
	return cfg, nil
}

// clientPool keeps one client per distinct connection config, so every
// account (and every secret override of it) has one connection pool and
// one cached token.
type clientPool struct {
	log *slog.Logger

	mu      sync.Mutex
	clients map[string]*pooled // by fingerprint of the client config
}

type pooled struct {
	client  *api.Client
	account string // the account key
	base    string // fingerprint of the account's own config when made
}

func newClientPool(log *slog.Logger) *clientPool {
	return &clientPool{log: log, clients: map[string]*pooled{}}
}

// get returns the client for cfg, made on first use.
func (p *clientPool) get(a *account, cfg api.Config) (*api.Client, error) {
	fp := fingerprint(cfg)
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.clients[fp]; ok {
		return e.client, nil
	}
	c, err := api.New(cfg, p.log.With("account", a.key))
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s account %s: %v", DriverName, a.key, err)
	}
	p.clients[fp] = &pooled{client: c, account: a.key, base: fingerprint(a.apiConfig())}
	if cfg.InsecureSkipVerify {
		// DDN's default, so kept; but never silently (docs/design.md contract 7).
		p.log.Warn("Infinia TLS certificates are not verified (insecureSkipVerify is true, DDN's default): "+
			"set insecureSkipVerify: false, with caCert for a private CA, to verify them", "account", a.key)
	}
	return c, nil
}

// retain closes the clients of accounts that are gone or whose settings
// changed (their in-flight calls finish; only idle connections close).
func (p *clientPool) retain(set *accountSet) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for fp, e := range p.clients {
		a, ok := set.byKey[e.account]
		if ok && fingerprint(a.apiConfig()) == e.base {
			continue
		}
		e.client.Close()
		delete(p.clients, fp)
	}
}

func (p *clientPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for fp, e := range p.clients {
		e.client.Close()
		delete(p.clients, fp)
	}
}

// stats sums the counters of every client (for tests and benchmarks).
func (p *clientPool) stats() api.Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	var s api.Stats
	for _, e := range p.clients {
		st := e.client.Stats()
		s.Logins += st.Logins
		s.Requests += st.Requests
		s.Failovers += st.Failovers
	}
	return s
}

// errNoAccount is the answer for a handle or parameter naming an account
// the config does not have.
func errNoAccount(code codes.Code, key, file string, set *accountSet) error {
	where := "the config"
	if file != "" {
		where = file
	}
	return status.Error(code, fmt.Sprintf("%s: account %s is not configured in %s (configured: %s); "+
		"restore its accounts.%s section: a section must stay while volumes use it",
		DriverName, key, where, strings.Join(set.keys, ", "), key))
}
