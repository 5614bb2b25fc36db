#!/usr/bin/env python3
"""Derive the TrueNAS method census and API model digest of one release.

Reads a checkout of github.com/truenas/middleware at a release tag (only
its text: nothing is imported or run) and prints JSON:

  {"source": {"tag", "commit", "api"},
   "methods": {"<service>.<method>": {"job": bool, "params": [names],
       "fields": {"<name>": required} of the first object argument,
       "fields_param": its position,
       "returns": {"<name>": always present} (fields of the entries
           CRUD/query methods return; NotRequired and ForUpdate ones may be
           absent)}}}

Public methods only: @private ones and private services are left out.
Methods carrying @api_method (25.04 and later, namespace by namespace)
get their fields from the API models; methods still on the legacy
@accepts schema (all of 24.10) from their Dict/Patch/Ref arguments, which
describe arguments only (no entries).

Usage: gen_census.py <middleware checkout> <tag> <api dir, e.g. v25_10_1>
"""
import ast
import json
import os
import subprocess
import sys


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def files(repo, tag, prefix):
    out = git(repo, "ls-tree", "-r", "--name-only", tag, prefix)
    return [f for f in out.splitlines() if f.endswith(".py")]


def parse(repo, tag, path):
    try:
        return ast.parse(git(repo, "show", f"{tag}:{path}"))
    except (SyntaxError, subprocess.CalledProcessError):
        return None


def name_of(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return name_of(node.func)
    if isinstance(node, ast.Subscript):
        return name_of(node.value)
    return None


# --- API models -------------------------------------------------------

class Models:
    """Every class of one api/<version> directory (and api/base)."""

    def __init__(self):
        self.classes = {}
        self.presence = False

    def add_module(self, tree):
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                self.classes[node.name] = node

    def single_argument(self, cls):
        for d in cls.decorator_list:
            if name_of(d) == "single_argument_args" and isinstance(d, ast.Call) and d.args:
                if isinstance(d.args[0], ast.Constant):
                    return d.args[0].value
        return None

    def for_update(self, cls):
        return any(isinstance(k, ast.keyword) and k.arg == "metaclass" and name_of(k.value) == "ForUpdateMetaclass"
                   for k in cls.keywords)

    def fields(self, name, seen=None):
        """Ordered {field: required} of a model class, bases first."""
        seen = seen or set()
        cls = self.classes.get(name)
        if cls is None or name in seen:
            return {}
        seen.add(name)
        out = {}
        for b in cls.bases:
            out.update(self.fields(name_of(b), seen))
        upd = self.for_update(cls)
        for st in cls.body:
            if not isinstance(st, ast.AnnAssign) or not isinstance(st.target, ast.Name):
                continue
            fname = st.target.id
            if fname.startswith("_") or fname == "model_config":
                continue
            ann = ast.unparse(st.annotation)
            if ann.startswith("Excluded") or (st.value is not None and name_of(st.value) == "excluded_field"):
                out.pop(fname, None)
                continue
            alias = None
            if isinstance(st.value, ast.Call) and name_of(st.value) == "Field":
                for k in st.value.keywords:
                    if k.arg == "alias" and isinstance(k.value, ast.Constant):
                        alias = k.value.value
            required = st.value is None or (isinstance(st.value, ast.Call) and name_of(st.value) == "Field"
                                            and not any(k.arg in ("default", "default_factory") for k in st.value.keywords)
                                            and not st.value.args)
            if self.presence:
                # an entry field is always in the output unless NotRequired
                optional = st.value is not None and (name_of(st.value) == "NotRequired" or isinstance(st.value, ast.Call)
                                                     and name_of(st.value) == "Field" and any(
                                                         k.arg == "default" and name_of(k.value) == "NotRequired"
                                                         for k in st.value.keywords))
                out[alias or fname] = not optional
            else:
                out[alias or fname] = bool(required and not upd)
        if upd:
            out = {k: False for k in out}
        return out

    def returned(self, name):
        """{field: always present} of an entry model."""
        self.presence = True
        try:
            return self.fields(name)
        finally:
            self.presence = False

    def annotation_model(self, name, field):
        cls = self.classes.get(name)
        if cls is None:
            return None
        for st in cls.body:
            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.target.id == field:
                for n in ast.walk(st.annotation):
                    if isinstance(n, ast.Name) and n.id in self.classes and n.id not in ("BaseModel",):
                        return n.id
        for b in cls.bases:
            m = self.annotation_model(name_of(b), field)
            if m:
                return m
        return None


def load_models(repo, tag, api):
    m = Models()
    for d in ("src/middlewared/middlewared/api/base", f"src/middlewared/middlewared/api/{api}"):
        for f in files(repo, tag, d):
            t = parse(repo, tag, f)
            if t:
                m.add_module(t)
    return m


# --- the legacy schema (middlewared.schema, @accepts) -------------------

SCHEMA_TYPES = {"Str", "Int", "Bool", "Dict", "List", "Float", "Dataset", "Path", "Dir", "File", "IPAddr",
                "Cron", "Datetime", "UnixPerm", "Password", "Ref", "Patch", "Any", "OROperator", "LocalUsername",
                "NetbiosName", "Time", "URI", "HostPath", "Inheritable", "Attribute", "Bytes", "Sid", "Hostname"}


def legacy_attr(node, registry):
    """(name, required, sub-fields or None) of one schema attribute."""
    if not isinstance(node, ast.Call):
        return None
    kind = name_of(node)
    if kind == "Inheritable" and node.args:
        return legacy_attr(node.args[0], registry)
    if kind not in SCHEMA_TYPES or not node.args or not isinstance(node.args[0], ast.Constant):
        return None
    name = node.args[0].value
    if not isinstance(name, str):
        return None
    required = any(k.arg == "required" and isinstance(k.value, ast.Constant) and k.value.value is True for k in node.keywords)
    sub = None
    if kind == "Dict":
        sub = {}
        for a in node.args[1:]:
            r = legacy_attr(a, registry)
            if r:
                sub[r[0]] = r[1]
        if any(k.arg == "register" for k in node.keywords):
            registry[name] = sub
    elif kind == "Ref":
        sub = registry.get(name)
    elif kind == "Patch" and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
        base = dict(registry.get(node.args[0].value, {})) if isinstance(node.args[0], ast.Constant) else {}
        update = False
        for op in node.args[2:]:
            if not isinstance(op, ast.Tuple) or len(op.elts) != 2 or not isinstance(op.elts[0], ast.Constant):
                continue
            verb, arg = op.elts[0].value, op.elts[1]
            if verb == "rm" and isinstance(arg, ast.Dict):
                for k, v in zip(arg.keys, arg.values):
                    if isinstance(k, ast.Constant) and k.value == "name" and isinstance(v, ast.Constant):
                        base.pop(v.value, None)
            elif verb == "add":
                r = legacy_attr(arg, registry)
                if r:
                    base[r[0]] = r[1]
            elif verb == "attr" and isinstance(arg, ast.Dict):
                for k, v in zip(arg.keys, arg.values):
                    if isinstance(k, ast.Constant) and k.value == "update" and isinstance(v, ast.Constant) and v.value:
                        update = True
        if update:
            base = {k: False for k in base}
        name = node.args[1].value
        sub = base
        if any(k.arg == "register" for k in node.keywords):
            registry[name] = sub
    return name, required, sub


def legacy_accepts(fn, registry):
    deco = next((d for d in fn.decorator_list if name_of(d) == "accepts" and isinstance(d, ast.Call)), None)
    if deco is None:
        return None
    params, fields, pos = [], None, 0
    for i, a in enumerate(deco.args):
        r = legacy_attr(a, registry)
        if r is None:
            return None
        params.append(r[0])
        if fields is None and r[2] is not None:
            fields, pos = r[2], i
    return params, fields, pos


# --- plugins ----------------------------------------------------------

SERVICE_BASES = {"Service", "CRUDService", "ConfigService", "SystemServiceService", "SharingService",
                 "SharingTaskService", "TaskPathService", "TDBWrapCRUDService", "TDBWrapConfigService"}


def config_of(cls):
    out = {}
    for st in cls.body:
        if isinstance(st, ast.ClassDef) and st.name == "Config":
            for a in st.body:
                if isinstance(a, ast.Assign) and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name):
                    key = a.targets[0].id
                    if isinstance(a.value, ast.Constant):
                        out[key] = a.value.value
                    else:
                        out[key] = name_of(a.value)
    return out


def default_namespace(classname):
    n = classname[:-len("Service")] if classname.endswith("Service") else classname
    return n.lower()


def scan_plugins(repo, tag, models):
    methods = {}
    registry = {}  # legacy Dicts registered by name (register=True)
    found = files(repo, tag, "src/middlewared/middlewared/plugins") + files(repo, tag, "src/middlewared/middlewared/service")
    trees = [t for t in (parse(repo, tag, f) for f in found) if t is not None]
    # two passes: a Patch or Ref may name a Dict registered in a later file
    for _ in range(2):
        for tree in trees:
            for fn in ast.walk(tree):
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    legacy_accepts(fn, registry)
    for tree in trees:
        for cls in tree.body:
            if not isinstance(cls, ast.ClassDef):
                continue
            bases = {name_of(b) for b in cls.bases}
            if not bases & SERVICE_BASES and not any((b or "").endswith("Service") for b in bases):
                continue
            cfg = config_of(cls)
            if cfg.get("private") is True:
                continue
            ns = cfg.get("namespace") or default_namespace(cls.name)
            crud = bool(bases & {"CRUDService", "SharingService", "SharingTaskService", "TaskPathService", "TDBWrapCRUDService"})
            config = bool(bases & {"ConfigService", "SystemServiceService", "TDBWrapConfigService"})
            entry = cfg.get("entry")
            if crud:
                for m in ("query", "get_instance"):
                    methods.setdefault(f"{ns}.{m}", {"job": False, "params": ["filters", "options"] if m == "query" else ["id", "options"],
                                                     "returns": models.returned(entry) if entry else {}})
            if config:
                methods.setdefault(f"{ns}.config", {"job": False, "params": [], "returns": models.returned(entry) if entry else {}})
            for fn in cls.body:
                if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                decos = {name_of(d) for d in fn.decorator_list}
                if "private" in decos or fn.name.startswith("_"):
                    continue
                api = next((d for d in fn.decorator_list if name_of(d) in ("api_method", "filterable_api_method")), None)
                if api is None and not decos & {"accepts", "filterable"} and not (fn.name.startswith("do_") and (crud or config)):
                    continue
                name = fn.name[3:] if fn.name.startswith("do_") and (crud or config) else fn.name
                info = {"job": "job" in decos, "params": [], "returns": {}}
                if "filterable" in decos:
                    info["params"] = ["filters", "options"]
                legacy = legacy_accepts(fn, registry) if api is None else None
                if legacy is not None:
                    info["params"] = legacy[0]
                    if legacy[1] is not None:
                        info["fields"] = legacy[1]
                        info["fields_param"] = legacy[2]
                if isinstance(api, ast.Call):
                    if name_of(api) == "filterable_api_method":
                        item = next((k.value for k in api.keywords if k.arg == "item"), None)
                        info["params"] = ["filters", "options"]
                        if item is not None:
                            info["returns"] = models.returned(name_of(item))
                    elif len(api.args) >= 2:
                        args_cls, res_cls = name_of(api.args[0]), name_of(api.args[1])
                        single = models.single_argument(models.classes[args_cls]) if args_cls in models.classes else None
                        if single:
                            info["params"] = [single]
                            info["fields"] = models.fields(args_cls)
                            info["fields_param"] = 0
                        else:
                            params = models.fields(args_cls)
                            info["params"] = list(params)
                            for i, p in enumerate(params):
                                sub = models.annotation_model(args_cls, p)
                                if sub:
                                    info["fields"] = models.fields(sub)
                                    info["fields_param"] = i
                                    break
                        ret = models.annotation_model(res_cls, "result")
                        if ret:
                            info["returns"] = models.returned(ret)
                methods[f"{ns}.{name}"] = info
    return methods


def main():
    repo, tag, api = sys.argv[1:4]
    models = load_models(repo, tag, api) if api != "-" else Models()
    methods = scan_plugins(repo, tag, models)
    commit = git(repo, "rev-parse", f"{tag}^{{commit}}").strip()
    json.dump({"source": {"repo": "github.com/truenas/middleware", "tag": tag, "commit": commit, "api": api},
               "methods": dict(sorted(methods.items()))}, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
