package truenas

import "github.com/switchyard-csi/switchyard/simulators/truenas/middleware"

// Errnos the middleware adds above the Linux ones (truenas_api_client's
// ErrnoMixin), and a few Linux ones mw does not name.
const (
	errnoEINTR             = 4
	errnoEAGAIN            = 11
	errnoENOMETHOD         = 201
	errnoENOTAUTHENTICATED = 207
)

// linuxErrnames are Python's errno.errorcode for Linux, for the errnos a
// service may plausibly raise; errname falls back to mw's names and then
// to "EUNKNOWN", as middlewared's get_errname does.
var linuxErrnames = map[int]string{
	1: "EPERM", 2: "ENOENT", 3: "ESRCH", 4: "EINTR", 5: "EIO", 6: "ENXIO", 7: "E2BIG", 8: "ENOEXEC",
	9: "EBADF", 10: "ECHILD", 11: "EAGAIN", 12: "ENOMEM", 13: "EACCES", 14: "EFAULT", 15: "ENOTBLK",
	16: "EBUSY", 17: "EEXIST", 18: "EXDEV", 19: "ENODEV", 20: "ENOTDIR", 21: "EISDIR", 22: "EINVAL",
	23: "ENFILE", 24: "EMFILE", 25: "ENOTTY", 26: "ETXTBSY", 27: "EFBIG", 28: "ENOSPC", 29: "ESPIPE",
	30: "EROFS", 31: "EMLINK", 32: "EPIPE", 33: "EDOM", 34: "ERANGE", 35: "EDEADLK", 36: "ENAMETOOLONG",
	37: "ENOLCK", 38: "ENOSYS", 39: "ENOTEMPTY", 40: "ELOOP", 61: "ENODATA", 62: "ETIME", 64: "ENONET", 74: "EBADMSG",
	95: "EOPNOTSUPP", 103: "ECONNABORTED", 104: "ECONNRESET", 107: "ENOTCONN", 110: "ETIMEDOUT",
	111: "ECONNREFUSED", 113: "EHOSTUNREACH", 114: "EALREADY", 115: "EINPROGRESS", 122: "EDQUOT",
	201: "ENOMETHOD", 202: "ESERVICESTARTFAILURE", 203: "EALERTCHECKERUNAVAILABLE", 204: "EREMOTENODEERROR",
	205: "EDATASETISLOCKED", 206: "EINVALIDRRDTIMESTAMP", 207: "ENOTAUTHENTICATED",
	208: "ESSLCERTVERIFICATIONERROR", 209: "EREBOOTREQUIRED", 210: "EHAUNAVAILABLE",
}

// errname names an errno the way data.errname and the "[ENOENT] ..."
// prefixes of middlewared's messages do.
func errname(n int) string {
	if s, ok := linuxErrnames[n]; ok {
		return s
	}
	if s := middleware.ErrnoName(n); len(s) > 1 && (s[1] < '0' || s[1] > '9') {
		return s
	}
	return "EUNKNOWN"
}
