package synology

// DSM's numeric error codes. The common and SYNO.API.Auth codes are those
// of Synology's "DSM Login Web API Guide"; the iSCSI codes are those the
// public CSI drivers handle; the share codes those synology-csi handles.
const (
	codeUnknown         = 100 // unknown error
	codeNoParameter     = 101 // no parameter of API, method or version
	codeNoSuchAPI       = 102 // the requested API does not exist
	codeNoSuchMethod    = 103 // the requested method does not exist
	codeVersion         = 104 // the requested version does not support the functionality
	codeNoPermission    = 105 // the logged in session does not have permission
	codeSessionTimeout  = 106 // session timeout
	codeSessionInterupt = 107 // session interrupted by duplicated login
	codeSIDNotFound     = 119 // SID not found
	codeInvalidParam    = 120 // invalid parameter

	codeAuthBadPassword = 400 // no such account or incorrect password
	codeAuthDisabled    = 401 // disabled account
	codeAuthDenied      = 402 // denied permission
	codeAuthBlocked     = 407 // blocked IP source

	// SYNO.Core.Share
	codeShareNoSuch    = 402 // no such share
	codeShareBadInput  = 403 // invalid input value
	codeShareExists    = 3301
	codeShareMaxCount  = 3309
	codeShareGeneric   = 3300 // clone from a snapshot that does not exist, ...
	codeShareNoSnapTag = 3310 // simulator's: no such share snapshot

	// SYNO.Core.ISCSI
	codeISCSINoSpace      = 18990002
	codeISCSIBadLunType   = 18990500
	codeISCSINoSuchLun    = 18990531
	codeISCSINoSuchSnap   = 18990532
	codeISCSILunExists    = 18990538
	codeISCSIMaxLuns      = 18990541
	codeISCSIMaxTargets   = 18990542
	codeISCSIMaxSnaps     = 18990543
	codeISCSIBadAuth      = 18990708
	codeISCSINoSuchTarget = 18990710
	codeISCSITargetExists = 18990744
	codeISCSILunBusy      = 18990505 // simulator's: the LUN is being deleted or cloned
)

// apiError is a failed call: DSM's code.
type apiError struct{ code int }

func (e *apiError) Error() string { return "dsm error " + itoa(e.code) }

func fail(code int) error { return &apiError{code: code} }
