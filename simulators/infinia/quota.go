package infinia

import "net/http"

// Usage is the sum of the volumes' sizes (nblocks × block_size) below an
// object: thin provisioning is not modelled, a volume uses its full size.

func (ds *dataset) usage() int64 {
	var n int64
	for _, v := range ds.Volumes {
		n += v.size()
	}
	return n
}

func (sub *subtenant) usage() int64 {
	var n int64
	for _, ds := range sub.Datasets {
		n += ds.usage()
	}
	return n
}

func (tn *tenant) usage() int64 {
	var n int64
	for _, sub := range tn.Subtenants {
		n += sub.usage()
	}
	return n
}

func (cl *cluster) usage() int64 {
	var n int64
	for _, tn := range cl.Tenants {
		n += tn.usage()
	}
	return n
}

// statusInsufficientStorage is what a change that exceeds a quota gets.
const statusInsufficientStorage = http.StatusInsufficientStorage // 507

// checkSpace: can grow bytes more be stored in dataset ds of w? Every
// bulk_quota on the way up (0 = unlimited) and the cluster's capacity
// must allow it.
func checkSpace(rq *request, w where, ds *dataset, grow int64) *apiError {
	levels := []struct {
		what         string
		quota, usage int64
	}{
		{"dataset " + rq.p("s") + "/" + rq.p("d"), ds.Quota, ds.usage()},
		{"subtenant " + rq.p("t") + "/" + rq.p("s"), w.sub.Quota, w.sub.usage()},
		{"tenant " + rq.p("c") + "/" + rq.p("t"), w.tn.Quota, w.tn.usage()},
		{"cluster " + rq.p("c"), w.cl.Capacity, w.cl.usage()},
	}
	for _, l := range levels {
		if l.quota > 0 && l.usage+grow > l.quota {
			return errorf(statusInsufficientStorage, "insufficient space: %s has %d of %d bytes in use, %d more requested",
				l.what, l.usage, l.quota, grow)
		}
	}
	return nil
}
