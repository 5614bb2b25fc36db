package framework

// The test pods are busybox shells. They report through what the API
// server keeps without reaching the kubelet (the storage VM's kubelet is
// not reachable from the API server, so no exec and no logs): readiness
// (/tmp/ready exists once the pattern is on the volume) and the
// termination message (the result, with exit code 0 or 1).
//
// Every path and number comes from the environment, so the unit tests
// run the very same scripts on this machine's busybox.

// Paths inside a test pod.
const (
	MountPath  = "/data"
	DevicePath = "/dev/e2e-block"
)

// Environment of the scripts:
//
//	PATTERN  the text repeated to make the data (unique per spec)
//	BYTES    how many bytes of it to write and read back
//	DATA     the mounted volume (filesystem mode) or
//	DEV      the raw device (block mode; DATA empty)
//	TARGET_KIB  the writer waits, once the data is written, until the
//	         volume is at least this big, then reports its size and exits 0;
//	         0 keeps it running until it is deleted
//	STOP     "" or a file (a downward-API projection of the pod's stop
//	         annotation, see Workload.Stop): once the size is reached the
//	         writer keeps running until the file has content, and only then
//	         reports and exits. A block device grows the moment the storage
//	         does, before the kubelet's NodeExpandVolume; the kubelet makes
//	         that call only for a running pod, so a writer that left at once
//	         would leave the PVC at its old size for ever.
//	WAIT     seconds the writer waits for TARGET_KIB (and STOP) before it
//	         gives up
//	READY    the file that marks the data as written (readiness probe)
//	TERMLOG  where the result goes (the termination message file)
const scriptCommon = `
set -u
say() { echo "$*" > "$TERMLOG"; echo "$*"; }
trap 'exit 0' TERM
pattern() { yes "$PATTERN" | head -c "$BYTES"; }
src() { if [ -n "$DATA" ]; then echo "$DATA/pattern"; else echo "$DEV"; fi; }
size_kib() {
  if [ -n "$DATA" ]; then df -P -k "$DATA" | awk 'NR==2 {print $2}'
  else echo $(( $(blockdev --getsize64 "$DEV") / 1024 )); fi
}
`

// WriterScript writes the pattern, marks itself ready, then waits for
// the volume to grow to TARGET_KIB.
const WriterScript = scriptCommon + `
if [ -n "$DATA" ]; then
  pattern > "$DATA/pattern.tmp" && mv "$DATA/pattern.tmp" "$DATA/pattern" || { say "writing $DATA/pattern failed"; exit 1; }
else
  pattern | dd of="$DEV" bs=65536 conv=fsync 2>/dev/null || { say "writing $DEV failed"; exit 1; }
fi
sync
got=$(head -c "$BYTES" "$(src)" | md5sum | cut -d' ' -f1)
want=$(pattern | md5sum | cut -d' ' -f1)
[ "$got" = "$want" ] || { say "read back $got right after writing, want $want"; exit 1; }
touch "$READY"
echo "written $want; size $(size_kib) KiB"
end=$(( $(date +%s) + WAIT ))
seen=""
while :; do
  kib=$(size_kib)
  if [ "$TARGET_KIB" -gt 0 ] && [ "$kib" -ge "$TARGET_KIB" ]; then
    [ -n "$seen" ] || { seen=$kib; echo "grown to $kib KiB"; }
    # still waiting only while a STOP file is named and empty
    [ -n "$STOP" ] && [ ! -s "$STOP" ] || { say "size_kib=$kib"; exit 0; }
  fi
  if [ "$TARGET_KIB" -gt 0 ] && [ "$(date +%s)" -ge "$end" ]; then
    if [ -n "$seen" ]; then say "grown to $seen KiB but no stop in $STOP for ${WAIT}s"; exit 1; fi
    say "size stayed at $kib KiB for ${WAIT}s, want at least $TARGET_KIB KiB"; exit 1
  fi
  sleep 1
done
`

// ReaderScript checks that the volume holds the pattern.
const ReaderScript = scriptCommon + `
s=$(src)
if [ -n "$DATA" ] && [ ! -f "$s" ]; then say "no $s on the volume: $(ls -la "$DATA" | tr '\n' ' ')"; exit 1; fi
want=$(pattern | md5sum | cut -d' ' -f1)
got=$(head -c "$BYTES" "$s" | md5sum | cut -d' ' -f1)
if [ "$got" = "$want" ]; then say "pattern ok $got"; exit 0; fi
say "pattern mismatch: md5 $got, want $want"
exit 1
`
