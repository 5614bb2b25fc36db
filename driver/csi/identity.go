package csi

import (
	"context"
	"sync/atomic"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Identity is the CSI identity service.
type Identity struct {
	csipb.UnimplementedIdentityServer
	Name         string
	Version      string
	Capabilities []*csipb.PluginCapability
	ready        atomic.Bool
}

// SetReady flips what Probe answers.
func (i *Identity) SetReady(ok bool) { i.ready.Store(ok) }

func (i *Identity) GetPluginInfo(context.Context, *csipb.GetPluginInfoRequest) (*csipb.GetPluginInfoResponse, error) {
	if i.Name == "" {
		return nil, status.Error(codes.Unavailable, "driver name is not configured (--csi-name)")
	}
	return &csipb.GetPluginInfoResponse{Name: i.Name, VendorVersion: i.Version}, nil
}

func (i *Identity) GetPluginCapabilities(context.Context, *csipb.GetPluginCapabilitiesRequest) (*csipb.GetPluginCapabilitiesResponse, error) {
	return &csipb.GetPluginCapabilitiesResponse{Capabilities: i.Capabilities}, nil
}

func (i *Identity) Probe(context.Context, *csipb.ProbeRequest) (*csipb.ProbeResponse, error) {
	return &csipb.ProbeResponse{Ready: wrapperspb.Bool(i.ready.Load())}, nil
}

// ServiceCapability builds a plugin capability of the SERVICE kind.
func ServiceCapability(t csipb.PluginCapability_Service_Type) *csipb.PluginCapability {
	return &csipb.PluginCapability{Type: &csipb.PluginCapability_Service_{Service: &csipb.PluginCapability_Service{Type: t}}}
}
