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
Only services whose methods carry @api_method (25.04 and later) have
models; for 24.10, whose plugins still use the legacy @accepts schema,
the census lists names and job flags only.

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
    found = files(repo, tag, "src/middlewared/middlewared/plugins") + files(repo, tag, "src/middlewared/middlewared/service")
    for f in found:
        tree = parse(repo, tag, f)
        if tree is None:
            continue
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
