package backend

import (
	"testing"

	"github.com/switchyard-csi/switchyard/driver/config"
)

func TestDriverOf(t *testing.T) {
	tests := []struct {
		name, yaml, want string
		inferred         bool
	}{
		{"named", "driver: zfs-generic-nfs\n", "zfs-generic-nfs", false},
		{"named wins over accounts", "driver: proxy\naccounts: {a/b/c: {}}\n", "proxy", false},
		{"DDN Infinia file", "accounts:\n  clu1/red/csiAccount:\n    apis: [https://x]\n", InfiniaDriver, true},
		{"accounts not a map", "accounts: [a]\n", "", false},
		{"neither", "zfs: {}\n", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree, err := config.Parse([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			got, inferred := DriverOf(tree)
			if got != tt.want || inferred != tt.inferred {
				t.Fatalf("DriverOf = %q, %v; want %q, %v", got, inferred, tt.want, tt.inferred)
			}
		})
	}
}
