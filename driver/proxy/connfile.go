package proxy

import (
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
// running proxy and `switchyard config check`.
func checkConnection(name, file string, tree, main config.Tree, s *Settings) (*connConfig, config.Problems, codes.Code) {
	problem := func(key, format string, a ...any) config.Problems {
		return config.Problems{{File: file, Key: key, Msg: fmt.Sprintf(format, a...)}}
	}
	drv, _ := backend.DriverOf(tree)
	if drv == "" {
		return nil, problem("driver", "required: the backend driver type of this connection (e.g. local-hostpath)"), codes.FailedPrecondition
	}
	if why, bad := backend.ProxyIncompatible[drv]; bad {
		return nil, problem("driver", "%s cannot be used behind the proxy: %s", drv, why), codes.InvalidArgument
	}
	typ, ok := backend.Lookup(drv)
	if !ok {
		return nil, problem("driver", "%s", backend.Unknown(drv)), codes.FailedPrecondition
	}
	// The connection file is a complete real-driver config merged over the
	// main config (so node.* and service.* defaults carry over), minus the
	// proxy's own section and driver name.
	base := config.Merge(nil, main)
	delete(base, "proxy")
	delete(base, "driver")
	merged := config.Merge(base, tree)

	var ps config.Problems
	if typ.Validate != nil {
		ps = append(ps, config.Problems(typ.Validate(merged)).InFile(file)...)
	}
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
	if len(ps) > 0 {
		return nil, ps, codes.FailedPrecondition
	}
	return &connConfig{name: name, file: file, typ: typ, merged: merged, topology: topo}, nil, codes.OK
}
