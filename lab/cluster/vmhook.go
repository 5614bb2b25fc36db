package cluster

import "errors"

// newVMNode makes the storage VM's node for `switchyard-lab cluster up
// --vm`. lab/cluster/vmnode*.go sets it in an init function, so this file
// (and the command) builds with or without them.
var newVMNode func(o Options) (NodeStarter, error)

// VMNode returns the storage VM's NodeStarter, to be put in
// Options.ExtraNodes; o are the options the cluster starts with.
func VMNode(o Options) (NodeStarter, error) {
	if newVMNode == nil {
		return nil, errors.New("this build has no storage VM node (lab/cluster/vmnode*.go)")
	}
	return newVMNode(o)
}
