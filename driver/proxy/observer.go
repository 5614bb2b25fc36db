package proxy

// Observer learns what happens to connection files, so metrics can show a
// broken file without anyone reading the log. It is called outside the
// proxy's locks and must be quick; it never sees a file's content.
type Observer interface {
	// ConnectionLoaded: a new version of name's file was read. err is nil
	// when a driver was built from it, else the status calls now get.
	ConnectionLoaded(name, file string, err error)
	// ConnectionRemoved: name's file is gone.
	ConnectionRemoved(name string)
}

// SetObserver reports connection loads and removals to o from now on. Call
// it before serving; nil turns reporting off.
func (c *Connections) SetObserver(o Observer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.observer = o
}

// DefaultConnection is the connection of calls that name none.
func (c *Connections) DefaultConnection() string { return c.settings.DefaultConnection }

// loaded reports a version of name's file once: a driver rebuilt after an
// idle close, or one built per call with the cache off, is not a reload.
func (c *Connections) loaded(name, file string, in *instance) {
	c.mu.Lock()
	o := c.observer
	prev, seen := c.seen[name]
	if o == nil || (seen && prev == in.stamp) {
		c.mu.Unlock()
		return
	}
	c.seen[name] = in.stamp
	c.mu.Unlock()
	o.ConnectionLoaded(name, file, in.err)
}

// removed reports that name's file is gone, once.
func (c *Connections) removed(name string) {
	c.mu.Lock()
	o := c.observer
	_, seen := c.seen[name]
	delete(c.seen, name)
	c.mu.Unlock()
	if o != nil && seen {
		o.ConnectionRemoved(name)
	}
}

// CopyObserver is an optional Observer interface: it learns how cross-
// connection copies progress (docs/proxy.md, "Clone and restore across
// connections"), for a bytes-copied metric.
type CopyObserver interface {
	// CopyProgress: delta more bytes were copied into connection target.
	CopyProgress(target string, delta int64)
	// CopyFinished: a copy into target ended; err is nil on success.
	CopyFinished(target string, err error)
}

// copyObserver is the observer's CopyObserver, or nil.
func (c *Connections) copyObserver() CopyObserver {
	c.mu.Lock()
	defer c.mu.Unlock()
	co, _ := c.observer.(CopyObserver)
	return co
}
