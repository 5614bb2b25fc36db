package vm

import (
	"strings"
	"testing"
	"time"
)

func TestQemuArgs(t *testing.T) {
	img := &Image{Kernel: "/c/vmlinux", Initrd: "/c/boot.cpio.gz", Disk: "/c/a,b/vm.img"}
	arg := func(args []string, flag string) string {
		for i := 0; i+1 < len(args); i++ {
			if args[i] == flag {
				return args[i+1]
			}
		}
		t.Fatalf("no %s in %q", flag, args)
		return ""
	}
	tests := []struct {
		name       string
		o          RunOptions
		wantNic    string
		wantAppend []string
		noAppend   []string
	}{
		{
			name:       "defaults: no network, no udev",
			o:          withRunDefaults(RunOptions{Share: "/s"}),
			wantNic:    "none",
			wantAppend: []string{"console=ttyS0", "root=/dev/vda", "panic=-1", "lab.noudev", "mitigations=off"},
			noAppend:   []string{"lab.net"},
		},
		{
			name:       "udev and forwarded ports",
			o:          withRunDefaults(RunOptions{Share: "/s", Udev: true, Forward: []PortForward{{8080, 80}, {4420, 4420}}}),
			wantNic:    "user,model=virtio-net-pci,restrict=on,hostfwd=tcp:127.0.0.1:8080-:80,hostfwd=tcp:127.0.0.1:4420-:4420",
			wantAppend: []string{"lab.net", "net.ifnames=0"},
			noAppend:   []string{"lab.noudev"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := qemuArgs(img, tt.o)
			if got := arg(args, "-nic"); got != tt.wantNic {
				t.Errorf("-nic %s, want %s", got, tt.wantNic)
			}
			appendArg := " " + arg(args, "-append") + " "
			for _, w := range tt.wantAppend {
				if !strings.Contains(appendArg, " "+w+" ") {
					t.Errorf("-append %q lacks %s", appendArg, w)
				}
			}
			for _, w := range tt.noAppend {
				if strings.Contains(appendArg, " "+w+" ") {
					t.Errorf("-append %q has %s", appendArg, w)
				}
			}
			// The cached image must never be written, and commas in paths are escaped.
			if got := arg(args, "-drive"); got != "file=/c/a,,b/vm.img,if=virtio,format=raw,snapshot=on" {
				t.Errorf("-drive %s", got)
			}
			if got := arg(args, "-virtfs"); got != "local,path=/s,mount_tag=lab,security_model=none,id=lab" {
				t.Errorf("-virtfs %s", got)
			}
			if got := arg(args, "-accel"); got != "tcg,thread=multi" {
				t.Errorf("-accel %s", got)
			}
			if arg(args, "-m") != "2048" || arg(args, "-smp") != "2" || arg(args, "-kernel") != "/c/vmlinux" {
				t.Errorf("memory, cpus or kernel wrong: %q", args)
			}
		})
	}
}

func TestRunDefaults(t *testing.T) {
	o := withRunDefaults(RunOptions{})
	if o.MemoryMB != 2048 || o.CPUs != 2 || o.Timeout != 15*time.Minute {
		t.Errorf("defaults %+v", o)
	}
	o = withRunDefaults(RunOptions{MemoryMB: 512, CPUs: 1, Timeout: time.Second})
	if o.MemoryMB != 512 || o.CPUs != 1 || o.Timeout != time.Second {
		t.Errorf("explicit values replaced: %+v", o)
	}
}

func TestLineWatcherAndTail(t *testing.T) {
	var lines []string
	w := &lineWatcher{onLine: func(l string) { lines = append(lines, l) }}
	for _, chunk := range []string{"SeaBIOS\r\nLAB: base", "-ready uptime=3.1\r\n", "partial"} {
		w.Write([]byte(chunk))
	}
	if len(lines) != 2 || lines[1] != "LAB: base-ready uptime=3.1" {
		t.Errorf("lines %q", lines)
	}
	tb := &tailBuffer{max: 5}
	tb.Write([]byte("abc"))
	tb.Write([]byte("defg"))
	if got := string(tb.Bytes()); got != "cdefg" {
		t.Errorf("tail %q, want cdefg", got)
	}
	if got := lastLines("a\nb\nc\n", 2); got != "b\nc" {
		t.Errorf("lastLines %q", got)
	}
}
