package middleware

// Services that hang objects on datasets (NFS/SMB shares, iSCSI extents,
// NVMe-oF namespaces) register here; pool.dataset.delete calls them so
// that deleting a dataset removes what is attached to it, as the real
// middleware does.

// OnDatasetDelete registers f; it is called with the dataset (or zvol)
// name and every descendant being deleted, before the data goes.
func (r *Registry) OnDatasetDelete(f func(c *Call, dataset string) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onDelete = append(r.onDelete, f)
}

// DatasetDeleted runs the registered functions for dataset; the first
// error stops the delete.
func (r *Registry) DatasetDeleted(c *Call, dataset string) error {
	r.mu.RLock()
	fs := append([]func(*Call, string) error(nil), r.onDelete...)
	r.mu.RUnlock()
	for _, f := range fs {
		if err := f(c, dataset); err != nil {
			return err
		}
	}
	return nil
}
