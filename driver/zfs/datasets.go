package zfs

import "context"

// Datasets is what a ZFS controller needs from a storage host. *CLI
// speaks the zfs command line (over SSH or locally); driver/truenas
// speaks the TrueNAS API. Implementations report failures as *Error (with
// a Kind when the text is not zfs's own) so IsNotExist and friends work
// whatever the transport.
type Datasets interface {
	Create(ctx context.Context, name string, o CreateOptions) error
	// CreateAndGet creates and then reads props of the new dataset.
	CreateAndGet(ctx context.Context, name string, o CreateOptions, props ...string) (Properties, error)
	Destroy(ctx context.Context, name string, o DestroyOptions) error
	Set(ctx context.Context, name string, props ...Prop) error
	Snapshot(ctx context.Context, snap string, props ...Prop) error
	Clone(ctx context.Context, snap, name string, props ...Prop) error
	// SendReceive copies snapshot snap to a new dataset target.
	SendReceive(ctx context.Context, snap, target string) error
	Get(ctx context.Context, name string, props ...string) (Properties, error)
	List(ctx context.Context, root string, o ListOptions) ([]Row, error)
}

var _ Datasets = (*CLI)(nil)
