// Package infinia is a simulator of the DDN Infinia ("RED") REST API as
// far as block volumes over NVMe-oF/TCP go: the API that DDN's CSI driver
// (block.csi.red.ddn.com) and switchyard's infinia-nvmeof backend talk to.
// It implements the wire contract that docs/backends/infinia.md records,
// over real HTTPS with a self-signed certificate (or plain HTTP),
// persists its object tree in StateDir (a snapshot and a journal of the
// changes since, which survive the simulator's process; not fsynced, as
// they need not survive the machine) and backs every volume with a
// sparse file that a Target can export. It never shares code with the
// driver it is used to test.
//
// Every answer is {"title": ..., "data": ...}; errors are {"title":
// "<reason>", "data": null} with 400, 401, 403, 404, 409, 500 (a Target
// failed), 503 (an injected fault) or 507 (quota). Routes, under
// /redapi/v1, with the key that counts them in Stats.Requests and the
// operation name that Faults use:
//
//	GET    /auth_user                                  "GET /auth_user"                 login
//	GET    /clusters/{c}/instances                     "GET /instances"                 instance.list
//	GET    /clusters/{c}/capacity_percent              "GET /capacity_percent"          capacity.get
//	GET    /clusters/{c}/tenants/{t}                   "GET /tenants/{t}"               tenant.get
//	GET    …/tenants/{t}/subtenants                    "GET /subtenants"                subtenant.list
//	GET    …/tenants/{t}/subtenants/{s}  (= P)         "GET /subtenants/{s}"            subtenant.get
//	GET    P/services                                  "GET /services"                  service.list
//	GET    P/services/{svc}                            "GET /services/{svc}"            service.get
//	GET    P/datasets/{d}                              "GET /datasets/{d}"              dataset.get
//	GET    P/datasets/{d}/volumes                      "GET /volumes"                   volume.list
//	POST   P/datasets/{d}/volumes                      "POST /volumes"                  volume.create
//	GET    P/datasets/{d}/volumes/{v}                  "GET /volumes/{v}"               volume.get
//	DELETE P/datasets/{d}/volumes/{v}?force=           "DELETE /volumes/{v}"            volume.delete
//	PUT    P/datasets/{d}/volumes/{v}/resize           "PUT /volumes/{v}/resize"        volume.resize
//	PUT    P/datasets/{d}/volumes/{v}/expose           "PUT /volumes/{v}/expose"        volume.expose
//	DELETE P/datasets/{d}/volumes/{v}/unexpose         "DELETE /volumes/{v}/unexpose"   volume.unexpose
//	POST   P/datasets/{d}/volumes/{v}/clone            "POST /volumes/{v}/clone"        volume.clone
//	GET    P/list                                      "GET /list"                      subsystem.list
//	POST   P/subsystems/{name}                         "POST /subsystems/{name}"        subsystem.create
//	GET    P/subsystems/{name}                         "GET /subsystems/{name}"         subsystem.get
//	DELETE P/subsystems/{name}?force=                   "DELETE /subsystems/{name}"      subsystem.delete
//	GET    P/subsystems/{name}/hosts                   "GET /subsystems/{name}/hosts"   host.list
//	POST   P/subsystems/{name}/hosts                   "POST /subsystems/{name}/hosts"  host.add
//	DELETE P/subsystems/{name}/hosts/{nqn}             "DELETE /subsystems/{name}/hosts/{nqn}" host.remove
//
// Choices where the contract is silent:
//   - Login: the level header must equal the account's level exactly; an
//     account's level may also be a cluster, a subtenant or "" (every
//     cluster). Tokens are HS256 JWTs signed with a key that Restart and
//     ExpireTokens replace, which is how issued tokens are forgotten. A
//     token of a subtenant level may not use the tenant routes (403).
//   - Lists (volumes, subtenants, services) honour the `from` and `limit`
//     headers; limit absent or 0 means all; `filter` is ignored.
//   - block_size absent means 4096. Clone: {v} is the new volume, srcVol
//     the source in the same dataset, sizeInBytes 0 = the source's size
//     (rounded up to blocks), optional nvmfTarget; it answers 201.
//   - expose, unexpose and the host routes answer the subsystem; unexpose
//     of a volume that is no namespace is 200 with data null. expose of an
//     instance outside the subsystem's reqInstances (when set) is 400; of
//     an unknown instance 404. A listener belongs to the volumes that
//     exposed it and goes with the last of them (unexpose or delete).
//   - Usage is the full size of every volume (no thin provisioning);
//     quotas are checked at dataset, subtenant, tenant and cluster
//     capacity; 0 is unlimited everywhere.
//   - volumeid counts up from 1 over the simulator; lcore = volumeid mod 8;
//     namespace "volume" is the volume's name; a subsystem's port defaults
//     to 4420 and its body may be empty; host lists are sorted.
//   - A body over 1 MiB is 413; a body field of the wrong JSON type is 400
//     naming the field.
//
// Tests drive failures through Faults (latency, error rate → 503,
// DropAfter), Restart, ExpireTokens and a Target that fails, and inspect
// Stats.
package infinia
