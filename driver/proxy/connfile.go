package proxy

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
)

// connConfig is a connection file read, merged and validated.
type connConfig struct {
	name, file string
	typ        *backend.Type
	merged     config.Tree
	topology   []TopologyEntry
	labels     map[string]string // proxy.labels, for connectionSelector
}

// connFile is the path of a connection's file.
func connFile(folder, name string) string { return filepath.Join(folder, name+".yaml") }

// fileReads counts connection files read and parsed, so tests and
// benchmarks can prove the hot path parses none.
var fileReads atomic.Int64

// ConnectionFileReads is the number of connection files parsed so far.
func ConnectionFileReads() int64 { return fileReads.Load() }

// readConnection reads and validates a connection file. The error is a
// gRPC status: INVALID_ARGUMENT for a driver type that can never sit behind
// the proxy, FAILED_PRECONDITION for everything the file must fix.
func readConnection(name, file string, main config.Tree, s *Settings) (*connConfig, error) {
	fileReads.Add(1)
	tree, err := config.LoadFile(file)
	if err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "connection %s: %v", name, err)
	}
	cc, ps, code := checkConnection(name, file, tree, main, s)
	if len(ps) > 0 {
		return nil, status.Errorf(code, "connection %s: %s", name, strings.ReplaceAll(ps.InFile(file).Error(), "\n", "; "))
	}
	return cc, nil
}

// checkConnection validates a parsed connection file; it is shared by the
// running proxy and `switchyard config check`. The driver type is resolved
// by backend.Resolve, so a bad type reads the same here as at start-up;
// the code is INVALID_ARGUMENT for a type that can never sit behind the
// proxy, FAILED_PRECONDITION for everything the file must fix.
func checkConnection(name, file string, tree, main config.Tree, s *Settings) (*connConfig, config.Problems, codes.Code) {
	// The connection file is a complete real-driver config merged over the
	// main config (so node.* and service.* defaults carry over), minus the
	// proxy's own section and driver name.
	base := config.Merge(nil, main)
	delete(base, "proxy")
	delete(base, "driver")
	merged := config.Merge(base, tree)

	typ, err := backend.Resolve(merged, file)
	var ps config.Problems
	if err != nil {
		var re *backend.ResolveError
		if !errors.As(err, &re) {
			return nil, config.Problems{{File: file, Key: "driver", Msg: err.Error()}}, codes.FailedPrecondition
		}
		if re.Kind != backend.Invalid {
			code := codes.FailedPrecondition
			if re.Kind == backend.ProxyIncompatible {
				code = codes.InvalidArgument
			}
			return nil, re.Problems, code
		}
		ps = append(ps, re.Problems...) // add the proxy's own checks below
	}
	drv, _ := backend.DriverOf(merged) // as the file spells it (an alias, perhaps)
	if typ.HostNQN && !s.NodeID.NQN {
		ps = append(ps, config.Problem{File: file, Key: "driver", Msg: fmt.Sprintf(
			"%s grants each node's NVMe host NQN at ControllerPublishVolume: set proxy.nodeId.parts.nqn: true in the main config "+
				"(and add PUBLISH_UNPUBLISH_VOLUME to the controller capabilities, with attachRequired: true on the CSIDriver)", drv)})
	}
	if typ.NodeLocal && s.Topology.Type != TopologyNode {
		ps = append(ps, config.Problem{File: file, Key: "driver", Msg: fmt.Sprintf(
			"%s keeps each volume on one node; the main config must set proxy.nodeTopology.type: node (it is %s)", drv, s.Topology.Type)})
	}
	topo, tps := parsePerDriverTopology(tree)
	ps = append(ps, tps.InFile(file)...)
	labels, lps := parseLabels(tree)
	ps = append(ps, lps.InFile(file)...)
	if len(ps) > 0 {
		return nil, ps, codes.FailedPrecondition
	}
	return &connConfig{name: name, file: file, typ: typ, merged: merged, topology: topo, labels: labels}, nil, codes.OK
}
