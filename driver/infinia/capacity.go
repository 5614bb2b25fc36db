package infinia

import (
	"context"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

// GetCapacity is the space left for new volumes of a StorageClass
// (parameters account and service): the smaller of what the service's
// dataset quota and the subtenant quota leave, or, when neither has a
// quota, what the cluster has free. Without a service parameter it is 0:
// no volume can be made without one (the same answer the proxy gives a
// call without a connection), and csi-sanity calls it with no parameters.
func (d *Driver) GetCapacity(ctx context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	none := &csi.GetCapacityResponse{}
	if caps := req.GetVolumeCapabilities(); len(caps) > 0 && checkCapabilities(caps) != "" {
		return none, nil
	}
	params := req.GetParameters()
	if strings.TrimSpace(params[paramService]) == "" {
		return none, nil
	}
	a, err := d.pickAccount(d.accounts.Load(), params)
	if err != nil {
		return nil, err
	}
	if z, ok := req.GetAccessibleTopology().GetSegments()[zoneKey]; ok && a.zone != "" && z != a.zone {
		return none, nil // the account's volumes are not reachable there
	}
	sub, svcName, err := parseService(params)
	if err != nil {
		return nil, err
	}
	c, err := d.client(a, nil)
	if err != nil {
		return nil, err
	}
	svc, err := d.service(ctx, c, a, sub, svcName)
	if api.IsNotFound(err) {
		return nil, invalidParam(paramService, "%s/%s does not exist for account %s (%v)", sub, svcName, a.key, err)
	}
	if err != nil {
		return nil, apiErr(err, a, "reading service "+sub+"/"+svcName)
	}
	free, bounded := int64(0), false
	limit := func(quota, usage int64) {
		if quota <= 0 {
			return
		}
		left := max(quota-usage, 0)
		if !bounded || left < free {
			free = left
		}
		bounded = true
	}
	ds, err := c.GetDataset(ctx, sub, svc.DatasetName())
	if err != nil {
		return nil, apiErr(err, a, "reading dataset "+sub+"/"+svc.DatasetName())
	}
	limit(ds.BulkQuota, ds.Usage)
	st, err := c.GetSubtenant(ctx, sub)
	if err != nil {
		return nil, apiErr(err, a, "reading subtenant "+sub)
	}
	limit(st.BulkQuota, st.Usage)
	if !bounded {
		cc, err := c.ClusterCapacity(ctx)
		if err != nil {
			return nil, apiErr(err, a, "reading the cluster capacity")
		}
		free = max(cc.Total-cc.Used, 0)
	}
	return &csi.GetCapacityResponse{AvailableCapacity: free}, nil
}
