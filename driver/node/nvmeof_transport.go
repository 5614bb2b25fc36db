package node

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// DefaultNVMeoFPort is the trsvcid of a tcp or rdma transport without a port.
const DefaultNVMeoFPort = "4420"

// nvmeTransport is one path to an NVMe-oF subsystem, written
// "tcp://host:port?opt=value" in volume_context (democratic-csi syntax;
// the query carries extra `nvme connect` options such as host-iface).
type nvmeTransport struct {
	raw        string
	typ        string // tcp, rdma, fc
	addr, port string // port is "" for fc
	opts       [][2]string
}

var nvmeOptName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`) }) // compiled on first use

func parseNVMeTransport(raw string) (nvmeTransport, error) {
	t := nvmeTransport{raw: raw}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return t, errors.New("expected <type>://<address>, e.g. tcp://10.0.0.5:4420")
	}
	t.typ = strings.ToLower(scheme)
	hostport, query, _ := strings.Cut(rest, "?")
	hostport = strings.TrimSuffix(hostport, "/")
	switch t.typ {
	case "tcp", "rdma":
		u, err := url.Parse("x://" + hostport)
		if err != nil {
			return t, err
		}
		t.addr, t.port = u.Hostname(), u.Port()
		if t.port == "" {
			t.port = DefaultNVMeoFPort
		}
		if n, err := strconv.Atoi(t.port); err != nil || n <= 0 || n > 65535 {
			return t, fmt.Errorf("bad port %q", t.port)
		}
	case "fc":
		// nn-0x…:pn-0x…, optionally in brackets.
		t.addr = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
	default:
		return t, fmt.Errorf("unknown transport type %q (tcp, rdma or fc)", scheme)
	}
	if t.addr == "" {
		return t, errors.New("no address")
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return t, fmt.Errorf("options: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(q)) {
		name := strings.TrimLeft(k, "-")
		if !nvmeOptName().MatchString(name) {
			return t, fmt.Errorf("option %q is not an nvme connect option name", k)
		}
		for _, val := range q[k] {
			t.opts = append(t.opts, [2]string{name, val})
		}
	}
	return t, nil
}

// connectArgs is the `nvme connect` command line for this path.
func (t nvmeTransport) connectArgs(nqn string) []string {
	args := []string{"connect", "--nqn", nqn, "--transport", t.typ, "--traddr", t.addr}
	if t.port != "" {
		args = append(args, "--trsvcid", t.port)
	}
	for _, o := range t.opts {
		args = append(args, "--"+o[0])
		if o[1] != "" {
			args = append(args, o[1])
		}
	}
	return args
}

// String names the path in messages.
func (t nvmeTransport) String() string {
	if t.port == "" {
		return t.typ + "://" + t.addr
	}
	return t.typ + "://" + joinHostPort(t.addr, t.port)
}

func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// resolved returns the transport with a host name replaced by its address:
// the kernel keeps IP addresses, and sysfs shows them.
func (t nvmeTransport) resolved(ctx context.Context, h *Host) (nvmeTransport, error) {
	if t.typ == "fc" {
		return t, nil
	}
	ip, err := h.resolveHost(ctx, t.addr)
	if err != nil {
		return t, err
	}
	t.addr = ip
	return t, nil
}

// nvmeTransports parses volume_context transport and transports
// (volumecontext.NVMeoF.AllTransports).
func nvmeTransports(raws []string) ([]nvmeTransport, error) {
	var out []nvmeTransport
	for _, raw := range raws {
		t, err := parseNVMeTransport(raw)
		if err != nil {
			return nil, fmt.Errorf("transport %q: %w", raw, err)
		}
		if !slices.ContainsFunc(out, func(o nvmeTransport) bool { return o.String() == t.String() }) {
			out = append(out, t)
		}
	}
	return out, nil
}
