// Package vmprobe holds tests that run only inside the lab's storage VM
// (lab/vm builds them into a static binary and runs it there with
// SWITCHYARD_VM_PROBE=1): they prove that the VM's kernel targets and
// initiators work (configfs, nvmet with nvme connect, LIO with iscsiadm,
// nfsd with an NFS 4.2 mount, smbd with a cifs mount). Elsewhere they skip.
package vmprobe
