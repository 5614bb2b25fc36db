package truenas

import (
	"context"
	"fmt"
)

// PoolHealth is the engine's PoolHealth for the freenas-api-* drivers:
// pool.query's status (ONLINE, DEGRADED, ...) and allocated/size, the
// numbers `zpool list` prints as health and capacity.
func (p *apiPlatform) PoolHealth(ctx context.Context, pool string) (string, int, error) {
	var rows []struct {
		Status    string `json:"status"`
		Size      int64  `json:"size"`
		Allocated int64  `json:"allocated"`
	}
	if err := p.call(ctx, &rows, "pool.query", [][]any{{"name", "=", pool}}); err != nil {
		return "", 0, fmt.Errorf("pool.query: %w", err)
	}
	if len(rows) == 0 {
		return "", 0, fmt.Errorf("pool.query: no pool %s", pool)
	}
	r := rows[0]
	capacity := 0
	if r.Size > 0 {
		capacity = int(r.Allocated * 100 / r.Size)
	}
	return r.Status, capacity, nil
}
