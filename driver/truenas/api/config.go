package api

import (
	"crypto/x509"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Config is democratic-csi's httpConnection block plus switchyard's
// transport and TLS knobs. Zero values take the defaults noted per field.
type Config struct {
	Host     string // httpConnection.host (required)
	Port     int    // httpConnection.port; 0 = 80/443 by protocol
	Protocol string // "http" | "https"; empty: derived from the port as democratic-csi does, else http
	Username string
	Password string
	APIKey   string // wins over Username/Password when both are set, as in democratic-csi
	// AllowInsecure skips TLS certificate verification (democratic-csi's allowInsecure).
	AllowInsecure bool
	// APIVersion is democratic-csi's apiVersion: only 2 (the default) is valid.
	APIVersion int
	// Transport is "" or "auto" (WebSocket, else REST), "websocket" or "rest".
	Transport string
	// AllowPlaintextAPIKey sends an API key over plain ws:// or http:// to a
	// server new enough (25.04.2+) to revoke it for that.
	AllowPlaintextAPIKey bool
	// CACert is PEM to trust besides the system roots (a self-signed
	// TrueNAS certificate, or the simulator's).
	CACert []byte
	// Timeout bounds one call (default 60s); CallJob's wait is bounded by
	// its context only.
	Timeout time.Duration
	// MaxConcurrentCalls bounds calls in flight (default 16). Over the
	// WebSocket they are spread over ceil(MaxConcurrentCalls/10)
	// connections, ten at most on each (wsCallsPerConn).
	MaxConcurrentCalls int
}

// The config keys named in errors. The first block is democratic-csi's
// schema; the second is switchyard's addition to it.
const (
	keyHost          = "httpConnection.host"
	keyPort          = "httpConnection.port"
	keyProtocol      = "httpConnection.protocol"
	keyUsername      = "httpConnection.username"
	keyPassword      = "httpConnection.password"
	keyAPIKey        = "httpConnection.apiKey"
	keyAllowInsecure = "httpConnection.allowInsecure"
	keyAPIVersion    = "httpConnection.apiVersion"

	keyTransport            = "httpConnection.transport"
	keyAllowPlaintextAPIKey = "httpConnection.allowPlaintextApiKey"
	keyCACert               = "httpConnection.caCert"
	keyTimeout              = "httpConnection.timeout"
	keyMaxConcurrentCalls   = "httpConnection.maxConcurrentCalls"
)

// Transport names, as Config.Transport takes them and Transport returns them.
const (
	TransportAuto      = "auto"
	TransportWebSocket = "websocket"
	TransportREST      = "rest"
)

const (
	defaultTimeout            = 60 * time.Second
	defaultMaxConcurrentCalls = 16
)

// settings is a validated Config with defaults applied.
type settings struct {
	cfg       Config
	https     bool
	port      int
	hostPort  string // host:port, IPv6 bracketed
	endpoint  string // scheme://host:port, the prefix of every message
	transport string // TransportAuto, TransportWebSocket or TransportREST
	roots     *x509.CertPool
	useAPIKey bool
}

func (cfg Config) validate() (*settings, error) {
	st := &settings{cfg: cfg}
	host := strings.TrimSpace(cfg.Host)
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return nil, fmt.Errorf("%s is required", keyHost)
	}
	if strings.ContainsAny(host, "/?#@ ") || strings.Contains(host, "://") {
		return nil, fmt.Errorf("%s: %q is not a host name or address (give the scheme in %s and the port in %s)",
			keyHost, cfg.Host, keyProtocol, keyPort)
	}
	if strings.Contains(host, ":") && net.ParseIP(host) == nil {
		return nil, fmt.Errorf("%s: %q has a port; give it in %s", keyHost, cfg.Host, keyPort)
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("%s: %d is not a TCP port (1-65535, or 0 for the protocol's default)", keyPort, cfg.Port)
	}

	proto := strings.ToLower(strings.TrimSpace(cfg.Protocol))
	if proto == "" {
		proto = protocolFromPort(cfg.Port)
	}
	switch proto {
	case "http":
	case "https":
		st.https = true
	default:
		return nil, fmt.Errorf("%s: must be http or https, got %q", keyProtocol, cfg.Protocol)
	}
	st.port = cfg.Port
	if st.port == 0 {
		st.port = 80
		if st.https {
			st.port = 443
		}
	}
	st.hostPort = net.JoinHostPort(host, strconv.Itoa(st.port))
	st.endpoint = proto + "://" + st.hostPort

	switch cfg.APIVersion {
	case 0, 2:
	case 1:
		return nil, fmt.Errorf("%s: 1 (the FreeNAS 11 /api/v1.0 API) is not supported; use 2", keyAPIVersion)
	default:
		return nil, fmt.Errorf("%s: %d is not a TrueNAS API version; use 2", keyAPIVersion, cfg.APIVersion)
	}

	switch t := strings.ToLower(strings.TrimSpace(cfg.Transport)); t {
	case "", TransportAuto:
		st.transport = TransportAuto
	case TransportWebSocket, TransportREST:
		st.transport = t
	default:
		return nil, fmt.Errorf("%s: must be auto, websocket or rest, got %q", keyTransport, cfg.Transport)
	}

	switch {
	case cfg.APIKey != "":
		st.useAPIKey = true
	case cfg.Username == "" && cfg.Password == "":
		return nil, fmt.Errorf("httpConnection: no credentials: set %s, or %s and %s", keyAPIKey, keyUsername, keyPassword)
	case cfg.Username == "":
		return nil, fmt.Errorf("%s is required with %s", keyUsername, keyPassword)
	case cfg.Password == "":
		return nil, fmt.Errorf("%s is required with %s (or set %s instead)", keyPassword, keyUsername, keyAPIKey)
	}

	if len(cfg.CACert) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(cfg.CACert) {
			return nil, fmt.Errorf("%s: no PEM certificate found", keyCACert)
		}
		st.roots = pool
	}

	switch {
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("%s: %s is negative", keyTimeout, cfg.Timeout)
	case cfg.Timeout == 0:
		st.cfg.Timeout = defaultTimeout
	}
	switch {
	case cfg.MaxConcurrentCalls < 0:
		return nil, fmt.Errorf("%s: %d is negative", keyMaxConcurrentCalls, cfg.MaxConcurrentCalls)
	case cfg.MaxConcurrentCalls == 0:
		st.cfg.MaxConcurrentCalls = defaultMaxConcurrentCalls
	}
	return st, nil
}

// protocolFromPort is democratic-csi's rule for an empty protocol: a port
// containing "80" means http, one containing "443" https (443 checked
// last, so it wins), anything else http.
func protocolFromPort(port int) string {
	proto := "http"
	if port == 0 {
		return proto
	}
	p := strconv.Itoa(port)
	if strings.Contains(p, "443") {
		proto = "https"
	}
	return proto
}

// plaintext reports whether credentials would cross the network unencrypted.
func (st *settings) plaintext() bool { return !st.https }

// wsURL and restURL are the two API roots.
func (st *settings) wsURL() string {
	scheme := "ws"
	if st.https {
		scheme = "wss"
	}
	return scheme + "://" + st.hostPort + "/api/current"
}

func (st *settings) restURL() string { return st.endpoint + "/api/v2.0" }
