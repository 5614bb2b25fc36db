package api

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Config is what a Client is built from: one Infinia service account.
type Config struct {
	// APIs are the REST endpoints, scheme://host[:port] (a path prefix is
	// kept; a trailing /redapi/v1 is dropped as it is added to every call).
	// Several are tried in order when one cannot be reached.
	APIs []string
	// User is the service account name, Level its "<cluster>/<tenant>".
	User, Level string
	Password    string
	// InsecureSkipVerify skips TLS certificate checks (DDN's default).
	InsecureSkipVerify bool
	// CACert is PEM to trust besides the system roots.
	CACert []byte
	// Timeout bounds one HTTP request (default 30s).
	Timeout time.Duration
	// MaxConnsPerHost bounds the connections to one endpoint (default 16).
	MaxConnsPerHost int
	// SecretAPIs says APIs came from a secret (the StorageClass secret
	// apis): errors and logs then name each endpoint "secret apis entry N"
	// (N counts from 1 in APIs) and never show its URL or host, not even
	// inside a library's error text.
	SecretAPIs bool
}

// Defaults for zero Config fields.
const (
	DefaultTimeout         = 30 * time.Second
	DefaultMaxConnsPerHost = 16
)

// basePath is the root of every REST call.
const basePath = "/redapi/v1"

// ParseEndpoint checks one apis entry and returns the URL calls are made
// under (without /redapi/v1). It never echoes a password, so callers may
// show its error for a secret-provided entry too.
func ParseEndpoint(s string) (string, error) {
	s = strings.TrimSpace(s)
	u, err := url.Parse(s)
	if err != nil || s == "" {
		return "", errors.New("is not a URL (want https://<host>[:port])")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return "", fmt.Errorf("must start with https:// or http://, got scheme %q", u.Scheme)
	}
	if u.Hostname() == "" {
		return "", errors.New("has no host (want https://<host>[:port])")
	}
	if u.User != nil {
		return "", errors.New("must not carry credentials (set password instead)")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("must not have a query or fragment")
	}
	p := strings.TrimSuffix(strings.TrimRight(u.Path, "/"), basePath)
	return u.Scheme + "://" + u.Host + strings.TrimRight(p, "/"), nil
}

// settings is a validated Config with defaults applied.
type settings struct {
	cfg       Config
	endpoints []string // normalised APIs
	labels    []string // how errors and logs name each endpoint
	roots     *x509.CertPool
}

// SecretEndpointLabel is how errors and logs name the i-th (from 0)
// endpoint of a Config whose APIs came from a secret.
func SecretEndpointLabel(i int) string { return fmt.Sprintf("secret apis entry %d", i+1) }

func (cfg Config) validate() (*settings, error) {
	st := &settings{cfg: cfg}
	if len(cfg.APIs) == 0 {
		return nil, errors.New("apis: at least one endpoint is required")
	}
	for i, a := range cfg.APIs {
		e, err := ParseEndpoint(a)
		if err != nil {
			if cfg.SecretAPIs {
				// The reason could quote part of the value.
				return nil, fmt.Errorf("%s is not an endpoint URL (want https://<host>[:port])", SecretEndpointLabel(i))
			}
			return nil, fmt.Errorf("apis[%d]: %v", i, err)
		}
		st.endpoints = append(st.endpoints, e)
		label := e
		if cfg.SecretAPIs {
			label = SecretEndpointLabel(i)
		}
		st.labels = append(st.labels, label)
	}
	if cfg.User == "" || cfg.Level == "" {
		return nil, errors.New("the account name and its <cluster>/<tenant> level are required")
	}
	if cfg.Password == "" {
		return nil, errors.New("password is required")
	}
	if len(cfg.CACert) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(cfg.CACert) {
			return nil, errors.New("caCert: no PEM certificate found")
		}
		st.roots = pool
	}
	switch {
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("timeout: %s is negative", cfg.Timeout)
	case cfg.Timeout == 0:
		st.cfg.Timeout = DefaultTimeout
	}
	switch {
	case cfg.MaxConnsPerHost < 0:
		return nil, fmt.Errorf("maxConnsPerHost: %d is negative", cfg.MaxConnsPerHost)
	case cfg.MaxConnsPerHost == 0:
		st.cfg.MaxConnsPerHost = DefaultMaxConnsPerHost
	}
	return st, nil
}
