package backend

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/echo"
)

// Failure is why a config names no driver type switchyard can run. Each
// kind has exactly one message, whichever entry point (start-up, `config
// check`, the proxy loading a connection file) meets it.
type Failure int

// Failure kinds, in the order Resolve checks them.
const (
	// MissingDriver: no `driver` key (and no DDN Infinia `accounts`).
	MissingDriver Failure = iota + 1
	// ProxyIncompatible: a type that can never sit behind the proxy
	// (objectivefs, zfs-local-ephemeral-inline, and proxy itself inside
	// a connection file). The proxy answers INVALID_ARGUMENT for it.
	ProxyIncompatible
	// NotInThisBuild: a democratic-csi type switchyard plans to serve.
	NotInThisBuild
	// UnknownDriver: a name switchyard has never heard of.
	UnknownDriver
	// Invalid: a known type whose config has problems (Validate).
	Invalid
)

// ResolveError is Resolve's error: the failure kind and the problems, each
// naming the file and the key. As an error it reads one problem per line
// and unwraps to config.Problems.
type ResolveError struct {
	Kind     Failure
	Problems config.Problems
}

func (e *ResolveError) Error() string { return e.Problems.Error() }

// Unwrap lets errors.As find the config.Problems.
func (e *ResolveError) Unwrap() error { return e.Problems }

// FailureOf is the failure kind of a Resolve error, 0 for any other error.
func FailureOf(err error) Failure {
	var re *ResolveError
	if errors.As(err, &re) {
		return re.Kind
	}
	return 0
}

// Resolve is the one driver-type resolution: it reads the driver type tree
// names (DriverOf), refuses a type that cannot be served, and validates
// tree with the type's Validate. file names the config file in every
// problem. tree is the complete config the backend will be built from (for
// a connection: the connection file merged over the main config).
//
// "proxy" is resolved like any other name, so a caller reading a main
// config handles `driver: proxy` before calling Resolve; inside a
// connection file it is ProxyIncompatible.
//
// On validation problems (Invalid) the type is returned as well, so a
// caller can add its own checks of the same file to the report.
func Resolve(tree config.Tree, file string) (*Type, error) {
	fail := func(kind Failure, format string, a ...any) (*Type, error) {
		return nil, &ResolveError{Kind: kind, Problems: config.Problems{{File: file, Key: "driver", Msg: fmt.Sprintf(format, a...)}}}
	}
	name, _ := DriverOf(tree)
	if name == "" {
		return fail(MissingDriver, "required: the driver type this file configures, e.g. local-hostpath (proxy only in a main config)")
	}
	if r, bad := proxyIncompatible[name]; bad {
		return fail(ProxyIncompatible, "%s cannot be used %s: %s; %s", name, r.where, r.why, r.fix)
	}
	typ, ok := Lookup(name)
	if !ok {
		if slices.Contains(planned, name) {
			return fail(NotInThisBuild, "%s is not available in this build of switchyard yet; this build has: %s", name, strings.Join(Names(), ", "))
		}
		hint := ""
		if s := suggest(name); s != "" {
			hint = fmt.Sprintf("; did you mean %q?", s)
		}
		return fail(UnknownDriver, "unknown driver %s%s; known: %s (proxy only in a main config)", echo.Quote(name), hint, strings.Join(Names(), ", "))
	}
	if typ.Validate != nil {
		if ps := config.Problems(typ.Validate(tree)); len(ps) > 0 {
			return typ, &ResolveError{Kind: Invalid, Problems: ps.InFile(file)}
		}
	}
	return typ, nil
}

// proxyIncompatible names the democratic-csi driver types that cannot sit
// behind the proxy (reference/proxy.md), with where, why and what to do.
var proxyIncompatible = map[string]struct{ where, why, fix string }{
	"proxy": {"behind the proxy", "a proxy cannot route to another proxy",
		"name a backend driver type here, e.g. local-hostpath"},
	"objectivefs": {"in switchyard, standalone or behind the proxy", "its NodeStageVolume needs the driver config, which node calls never see",
		"run it in its own democratic-csi deployment"},
	"zfs-local-ephemeral-inline": {"in switchyard, standalone or behind the proxy", "inline ephemeral volumes never pass through CreateVolume, so no handle can carry the connection",
		"use zfs-local-dataset or zfs-local-zvol, or run it in its own democratic-csi deployment"},
}

// planned lists the democratic-csi driver types of its compatibility list
// whose backends were added after the first ones. The full build
// (driver/allbackends) registers every one of them, and its architecture
// test keeps it so; a build that links fewer backends (a trimmed binary, a
// package's test binary) answers a config naming a missing one with "not
// in this build" rather than "unknown driver".
var planned = []string{
	"synology-iscsi", "synology-nfs", "synology-smb",
	"nfs-client", "smb-client", "lustre-client", "node-manual",
	"zfs-local-dataset", "zfs-local-zvol",
}

// Planned returns the planned driver types (for the architecture test that
// checks the full build registers them).
func Planned() []string { return slices.Clone(planned) }

// suggest is the known name closest to name, if it is a likely typo (at
// most two edits, and fewer than half the name).
func suggest(name string) string {
	candidates := append(Names(), planned...)
	candidates = append(candidates, "proxy")
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestD && d*2 < len(name) {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
