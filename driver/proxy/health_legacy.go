package proxy

// The CSI 1.12 form of volume health, for consumers that still speak it.
//
// CSI 1.13 removed VOLUME_CONDITION (controller capability 11, and field 2
// of ListVolumes' and ControllerGetVolume's volume status) in favour of
// ControllerGetVolumeHealth. kubernetes-csi's external-health-monitor has no
// release against CSI 1.13 (v0.18.0 is built on CSI 1.12): it exits at
// start unless the driver advertises capability 11, and it reads health
// only from that status field. csi-sanity v5.6 accepts the old capability's
// wire value for this reason.
//
// LegacyVolumeCondition is a server interceptor that adds that form, derived
// from the driver's own ControllerGetVolumeHealth: capability 11 next to
// GET_VOLUME_HEALTH, and in ListVolumes and ControllerGetVolume answers a
// VolumeCondition (abnormal when the volume has any health entry; the
// message lists them) written as the wire bytes of the removed field. A
// CSI 1.13 reader skips those bytes as an unknown field; a CSI 1.12 reader
// sees its volume_condition. Nothing else in an answer changes.

import (
	"context"
	"fmt"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

const (
	// legacyVolumeConditionCap is CSI 1.12's VOLUME_CONDITION (reserved 11 in 1.13).
	legacyVolumeConditionCap = csipb.ControllerServiceCapability_RPC_Type(11)
	// legacyVolumeConditionField is VolumeStatus.volume_condition (reserved 2 in 1.13).
	legacyVolumeConditionField = protowire.Number(2)
)

// LegacyVolumeCondition returns the interceptor for the controller service
// c; with a nil c (a node-only plugin) it passes every call through.
func LegacyVolumeCondition(c csipb.ControllerServer) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := handler(ctx, req)
		if err != nil || c == nil {
			return resp, err
		}
		switch r := resp.(type) {
		case *csipb.ControllerGetCapabilitiesResponse:
			if hasHealthCap(r.GetCapabilities()) && !hasCap(r.GetCapabilities(), legacyVolumeConditionCap) {
				// A copy: the service may hand out one shared list.
				caps := append(append([]*csipb.ControllerServiceCapability(nil), r.GetCapabilities()...), rpcCap(legacyVolumeConditionCap))
				return &csipb.ControllerGetCapabilitiesResponse{Capabilities: caps}, nil
			}
		case *csipb.ListVolumesResponse:
			if servesHealth(ctx, c) {
				for _, e := range r.GetEntries() {
					if e.GetVolume() == nil {
						continue
					}
					if e.Status == nil {
						e.Status = &csipb.ListVolumesResponse_VolumeStatus{}
					}
					addCondition(ctx, c, e.GetVolume().GetVolumeId(), e.Status)
				}
			}
		case *csipb.ControllerGetVolumeResponse:
			if r.GetVolume() != nil && servesHealth(ctx, c) {
				if r.Status == nil {
					r.Status = &csipb.ControllerGetVolumeResponse_VolumeStatus{}
				}
				addCondition(ctx, c, r.GetVolume().GetVolumeId(), r.Status)
			}
		}
		return resp, nil
	}
}

// servesHealth: the controller advertises GET_VOLUME_HEALTH (so it can
// answer ControllerGetVolumeHealth for the condition).
func servesHealth(ctx context.Context, c csipb.ControllerServer) bool {
	caps, err := c.ControllerGetCapabilities(ctx, &csipb.ControllerGetCapabilitiesRequest{})
	return err == nil && hasHealthCap(caps.GetCapabilities())
}

func hasHealthCap(caps []*csipb.ControllerServiceCapability) bool {
	return hasCap(caps, csipb.ControllerServiceCapability_RPC_GET_VOLUME_HEALTH)
}

func hasCap(caps []*csipb.ControllerServiceCapability, t csipb.ControllerServiceCapability_RPC_Type) bool {
	for _, c := range caps {
		if c.GetRpc().GetType() == t {
			return true
		}
	}
	return false
}

func rpcCap(t csipb.ControllerServiceCapability_RPC_Type) *csipb.ControllerServiceCapability {
	return &csipb.ControllerServiceCapability{Type: &csipb.ControllerServiceCapability_Rpc{Rpc: &csipb.ControllerServiceCapability_RPC{Type: t}}}
}

// addCondition writes the volume's condition into status. A health call
// that fails (the volume vanished between the list and the check, or the
// backend did not answer) adds nothing: no condition is "not known", which
// is what an answer without the field says too.
func addCondition(ctx context.Context, c csipb.ControllerServer, id string, status protoreflect.ProtoMessage) {
	h, err := c.ControllerGetVolumeHealth(ctx, &csipb.ControllerGetVolumeHealthRequest{VolumeId: id})
	if err != nil {
		return
	}
	abnormal, msg := condition(h.GetVolumeHealth())
	m := status.ProtoReflect()
	m.SetUnknown(append(stripField(m.GetUnknown(), legacyVolumeConditionField), encodeCondition(abnormal, msg)...))
}

// condition is CSI 1.12's (abnormal, message) for a CSI 1.13 health: any
// entry is abnormal; the message names each as STATUS/Reason: message.
func condition(h *csipb.VolumeHealth) (bool, string) {
	entries := h.GetHealthStatuses()
	if len(entries) == 0 {
		return false, ""
	}
	parts := make([]string, 0, len(entries))
	for _, e := range entries {
		parts = append(parts, fmt.Sprintf("%s/%s: %s", e.GetStatus(), e.GetReason(), e.GetMessage()))
	}
	return true, strings.Join(parts, "; ")
}

// encodeCondition is field 2 of a VolumeStatus holding a CSI 1.12
// VolumeCondition{abnormal = 1 (bool), message = 2 (string)}.
func encodeCondition(abnormal bool, msg string) []byte {
	var inner []byte
	if abnormal {
		inner = protowire.AppendTag(inner, 1, protowire.VarintType)
		inner = protowire.AppendVarint(inner, 1)
	}
	if msg != "" {
		inner = protowire.AppendTag(inner, 2, protowire.BytesType)
		inner = protowire.AppendString(inner, msg)
	}
	b := protowire.AppendTag(nil, legacyVolumeConditionField, protowire.BytesType)
	return protowire.AppendBytes(b, inner)
}

// stripField drops earlier copies of field n from unknown bytes (an answer
// passed through twice must not carry two conditions).
func stripField(b []byte, n protowire.Number) []byte {
	var out []byte
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return out
		}
		m := protowire.ConsumeFieldValue(num, typ, b[l:])
		if m < 0 {
			return out
		}
		if num != n {
			out = append(out, b[:l+m]...)
		}
		b = b[l+m:]
	}
	return out
}

// LegacyCondition is what a CSI 1.12 reader (external-health-monitor
// v0.18) finds in a VolumeStatus's field 2.
type LegacyCondition struct {
	Found    bool
	Abnormal bool
	Message  string
	// Copies counts field 2's occurrences: more than one means an answer
	// was passed through twice without stripField.
	Copies int
}

// ReadLegacyCondition decodes a VolumeStatus's unknown bytes as a CSI 1.12
// reader would. It sits beside encodeCondition so that the tests of every
// backend read the bridge's output with the one decoder that matches it.
func ReadLegacyCondition(unknown []byte) (LegacyCondition, error) {
	var c LegacyCondition
	for b := unknown; len(b) > 0; {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return c, fmt.Errorf("volume status: bad field tag in %x", unknown)
		}
		b = b[l:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return c, fmt.Errorf("volume status: bad field %d in %x", num, unknown)
		}
		if num != legacyVolumeConditionField || typ != protowire.BytesType {
			b = b[m:]
			continue
		}
		inner, _ := protowire.ConsumeBytes(b)
		b = b[m:]
		c.Found, c.Copies = true, c.Copies+1
		for len(inner) > 0 {
			n, ty, k := protowire.ConsumeTag(inner)
			if k < 0 {
				return c, fmt.Errorf("volume condition: bad field tag in %x", unknown)
			}
			inner = inner[k:]
			switch {
			case n == 1 && ty == protowire.VarintType:
				v, k := protowire.ConsumeVarint(inner)
				if k < 0 {
					return c, fmt.Errorf("volume condition: bad abnormal field in %x", unknown)
				}
				c.Abnormal, inner = v != 0, inner[k:]
			case n == 2 && ty == protowire.BytesType:
				s, k := protowire.ConsumeString(inner)
				if k < 0 {
					return c, fmt.Errorf("volume condition: bad message field in %x", unknown)
				}
				c.Message, inner = s, inner[k:]
			default:
				return c, fmt.Errorf("volume condition: unexpected field %d in %x", n, unknown)
			}
		}
	}
	return c, nil
}
