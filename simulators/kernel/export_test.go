package kernel

// The VM helpers of TestInVM, for the external test package (kernel_test),
// whose tests start simulators that import this package.
var (
	InVMEnv       = inVMEnv
	VMRun         = vmRun
	VMTry         = vmTry
	WaitFor       = waitFor
	NVMeDevice    = nvmeDevice
	ISCSIDisk     = iscsiDisk
	StartISCSID   = startISCSID
	StepTimer     = stepTimer
	InitiatorName = initiatorName
)
