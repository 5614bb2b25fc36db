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
			o:          withRunDefaults(RunOptions{Share: "/s", Udev: true, Forward: []PortForward{{HostPort: 8080, GuestPort: 80}, {HostPort: 4420, GuestPort: 4420}}}),
			wantNic:    "user,model=virtio-net-pci,restrict=on,hostfwd=tcp:127.0.0.1:8080-:80,hostfwd=tcp:127.0.0.1:4420-:4420",
			wantAppend: []string{"lab.net", "net.ifnames=0"},
			noAppend:   []string{"lab.noudev"},
		},
		{
			// One socat per connection to the host's apiserver (cmd: form),
			// and the kubelet's port reachable from the host.
			name: "guest forwards alone enable the card",
			o: withRunDefaults(RunOptions{Share: "/s", GuestForward: []GuestForward{
				{GuestAddr: APIServerGuestAddr, GuestPort: 6443, HostPort: 16443},
			}}),
			wantNic:    "user,model=virtio-net-pci,restrict=on,guestfwd=tcp:10.0.2.100:6443-cmd:/usr/bin/socat STDIO TCP:127.0.0.1:16443",
			wantAppend: []string{"lab.net"},
		},
		{
			name: "host and guest forwards together",
			o: withRunDefaults(RunOptions{Share: "/s", Forward: []PortForward{{HostPort: 17010, GuestPort: 17010, HostAddr: "10.213.17.2"}},
				GuestForward: []GuestForward{{GuestAddr: "10.0.2.100", GuestPort: 6443, HostPort: 16443}, {GuestAddr: "10.0.2.101", GuestPort: 80, HostPort: 8080}}}),
			wantNic: "user,model=virtio-net-pci,restrict=on,hostfwd=tcp:10.213.17.2:17010-:17010" +
				",guestfwd=tcp:10.0.2.100:6443-cmd:/usr/bin/socat STDIO TCP:127.0.0.1:16443" +
				",guestfwd=tcp:10.0.2.101:80-cmd:/usr/bin/socat STDIO TCP:127.0.0.1:8080",
			wantAppend: []string{"lab.net"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := qemuArgs(img, tt.o, "/usr/bin/socat")
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

func TestQemuArgsSizes(t *testing.T) {
	img := &Image{Kernel: "/k", Initrd: "/i", Disk: "/d"}
	args := qemuArgs(img, withMachineDefaults(RunOptions{Share: "/s", MemoryMB: 3072}), "")
	joined := strings.Join(args, " ")
	if !strings.Contains(joined, "-m 3072 ") || !strings.Contains(joined, "-smp 2 ") {
		t.Errorf("a node VM's memory or cpus wrong: %s", joined)
	}
	// A path with a comma in the socat command stays one option value.
	o := withMachineDefaults(RunOptions{Share: "/s", GuestForward: []GuestForward{{"10.0.2.100", 6443, 1}}})
	for i, a := range qemuArgs(img, o, "/opt/a,b/socat") {
		if a == "-nic" && !strings.HasSuffix(qemuArgs(img, o, "/opt/a,b/socat")[i+1], "cmd:/opt/a,,b/socat STDIO TCP:127.0.0.1:1") {
			t.Errorf("comma not escaped: %s", qemuArgs(img, o, "/opt/a,b/socat")[i+1])
		}
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
	// A long-lived machine has no timeout unless asked for one.
	if o := withMachineDefaults(RunOptions{}); o.Timeout != 0 || o.MemoryMB != 2048 {
		t.Errorf("machine defaults %+v", o)
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

// More disks come after the root disk (so the guest sees them as vdb, ...)
// and, like it, as snapshots: a cached disk is never written.
func TestQemuArgsDisks(t *testing.T) {
	img := &Image{Kernel: "/k", Initrd: "/i", Disk: "/d/root.img"}
	args := qemuArgs(img, withMachineDefaults(RunOptions{Share: "/s", Disks: []string{"/c/store,1.img", "/c/two.img"}}), "")
	var drives []string
	for i, a := range args {
		if a == "-drive" {
			drives = append(drives, args[i+1])
		}
	}
	want := []string{
		"file=/d/root.img,if=virtio,format=raw,snapshot=on",
		"file=/c/store,,1.img,if=virtio,format=raw,snapshot=on",
		"file=/c/two.img,if=virtio,format=raw,snapshot=on",
	}
	if strings.Join(drives, "\n") != strings.Join(want, "\n") {
		t.Errorf("drives\n%s\nwant\n%s", strings.Join(drives, "\n"), strings.Join(want, "\n"))
	}
}
