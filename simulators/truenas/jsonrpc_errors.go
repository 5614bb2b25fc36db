package truenas

import "github.com/switchyard-csi/switchyard/simulators/truenas/middleware"

// rpcError renders an error as middlewared's JSON-RPC handler does:
// ValidationErrors and InstanceNotFound -32602 "Invalid params" with
// data.extra [[attribute, message, errno]]; CallError -32001 "Method call
// error" with data.error/errname/reason; a failure of the simulator
// itself -32603 "Internal error".
func rpcError(err error) (code int, msg string, data map[string]any) {
	c := classify(err)
	switch c.kind {
	case kindValidation:
		reason := validationReason(c.invalid)
		return rpcInvalidParams, "Invalid params", errData(middleware.EINVAL, reason, traceOf("ValidationErrors", reason, ""), validationExtra(c.invalid))
	case kindNotFound:
		reason := notFoundReason(c.notFound)
		return rpcInvalidParams, "Invalid params", errData(middleware.EINVAL, reason, traceOf("InstanceNotFound", reason, ""),
			[]any{[]any{nil, c.notFound.Message, middleware.ENOENT}})
	case kindCall, kindNoMethod:
		reason := callReason(c.call)
		return rpcMethodCallError, "Method call error", errData(c.call.Errno, reason, traceOf("CallError", reason, ""), c.call.Extra)
	}
	return rpcInternalError, "Internal error", errData(middleware.EINVAL, err.Error(), internalTrace(err), nil)
}

// errData is the "data" member of an error: middlewared's error object.
func errData(errno int, reason string, trace map[string]any, extra any) map[string]any {
	return map[string]any{"error": errno, "errname": errname(errno), "reason": reason, "trace": trace, "extra": extra}
}
