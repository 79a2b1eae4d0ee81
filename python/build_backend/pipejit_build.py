"""PEP 517 build backend of the pipejit package (pyproject.toml names it).

Why not setuptools: pip builds a package in an isolated environment and
downloads the backend's requirements from a package index; this backend
requires nothing, so `pip install ./python` works with no index at all
(an offline machine, a fresh CI container). It writes the wheel itself
(a zip with the .dist-info files of the wheel format): the pipejit/
sources plus a copy of libpipejit.so from the build tree (or the file
named by PIPEJIT_LIB), so the installed package does not depend on the
checkout afterwards. Editable installs (`pip install -e ./python`) add a
.pth file pointing at python/ instead, and use the checkout's build/.
"""
import base64
import hashlib
import io
import os
import re
import sysconfig
import tarfile
import zipfile

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_DIR = os.path.dirname(PYTHON_DIR)
PACKAGE_DIR = os.path.join(PYTHON_DIR, "pipejit")
EPOCH = (1980, 1, 1, 0, 0, 0)   # fixed timestamps: the same tree gives the same wheel


def _project():
    """The [project] table of pyproject.toml."""
    with open(os.path.join(PYTHON_DIR, "pyproject.toml"), "rb") as f:
        text = f.read()
    try:
        import tomllib
    except ImportError:   # Python < 3.11: the few keys this file uses
        return _parse_project(text.decode())
    return tomllib.loads(text.decode())["project"]


def _parse_project(text):
    section, project, extras = None, {}, {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        m = re.match(r"\[(.*)\]$", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"([\w-]+)\s*=\s*(.*)$", line)
        if not m:
            continue
        key, value = m.group(1), m.group(2)
        parsed = re.findall(r'"([^"]*)"', value) if value.startswith("[") else value.strip('"')
        if section == "project":
            project[key] = parsed
        elif section == "project.optional-dependencies":
            extras[key] = parsed
    project["optional-dependencies"] = extras
    return project


def _metadata(project):
    lines = ["Metadata-Version: 2.1", "Name: " + project["name"], "Version: " + project["version"],
             "Summary: " + project.get("description", ""),
             "Requires-Python: " + project.get("requires-python", ">=3")]
    lines += ["Requires-Dist: " + d for d in project.get("dependencies", [])]
    for extra, deps in project.get("optional-dependencies", {}).items():
        lines.append("Provides-Extra: " + extra)
        lines += ['Requires-Dist: %s; extra == "%s"' % (d, extra) for d in deps]
    return "\n".join(lines) + "\n"


def _library():
    """Path of the libpipejit.so to bundle."""
    path = os.environ.get("PIPEJIT_LIB") or os.path.join(REPO_DIR, "build", "libpipejit.so")
    if not os.path.isfile(path):
        raise RuntimeError("pipejit: %s not found: build the library first (`make build` in %s), "
                           "or set PIPEJIT_LIB to the libpipejit.so to package"
                           % (path, REPO_DIR))
    return path


def _sources():
    """(name in the wheel, path) of every module of the package."""
    return [("pipejit/" + f, os.path.join(PACKAGE_DIR, f))
            for f in sorted(os.listdir(PACKAGE_DIR)) if f.endswith(".py")]


def _platform_tag():
    return "py3-none-" + re.sub(r"[-.]", "_", sysconfig.get_platform())


def _dist_info(project, tag):
    """The .dist-info files but RECORD, as {name: bytes}."""
    wheel = "Wheel-Version: 1.0\nGenerator: pipejit_build\nRoot-Is-Purelib: false\nTag: %s\n" % tag
    return {"METADATA": _metadata(project).encode(), "WHEEL": wheel.encode()}


def _write_wheel(directory, files, tag):
    """Writes the wheel of `files` ([(name, bytes, mode)]) and returns its
    file name."""
    project = _project()
    dist = "%s-%s" % (project["name"], project["version"])
    info = dist + ".dist-info/"
    files = list(files) + [(info + k, v, 0o644) for k, v in _dist_info(project, tag).items()]
    record = []
    name = "%s-%s.whl" % (dist, tag)
    with zipfile.ZipFile(os.path.join(directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data, mode in files:
            zi = zipfile.ZipInfo(arcname, EPOCH)
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append("%s,sha256=%s,%d" % (arcname, digest.decode(), len(data)))
        record.append(info + "RECORD,,")
        zi = zipfile.ZipInfo(info + "RECORD", EPOCH)
        zi.external_attr = 0o100644 << 16
        z.writestr(zi, "\n".join(record) + "\n")
    return name


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# ---- PEP 517 / 660 hooks ----------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None, tag=None):
    project = _project()
    info = "%s-%s.dist-info" % (project["name"], project["version"])
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    for k, v in _dist_info(project, tag or _platform_tag()).items():
        with open(os.path.join(metadata_directory, info, k), "wb") as f:
            f.write(v)
    return info


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return prepare_metadata_for_build_wheel(metadata_directory, config_settings, "py3-none-any")


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = [(n, _read(p), 0o644) for n, p in _sources()]
    files.append(("pipejit/libpipejit.so", _read(_library()), 0o755))
    return _write_wheel(wheel_directory, files, _platform_tag())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    pth = (PYTHON_DIR + "\n").encode()
    return _write_wheel(wheel_directory, [("pipejit_editable.pth", pth, 0o644)], "py3-none-any")


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    dist = "%s-%s" % (project["name"], project["version"])
    members = [("pyproject.toml", os.path.join(PYTHON_DIR, "pyproject.toml")),
               ("build_backend/pipejit_build.py", os.path.abspath(__file__))] + _sources()
    name = dist + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        entries = [(n, _read(p)) for n, p in members] + [("PKG-INFO", _metadata(project).encode())]
        for arcname, data in entries:
            ti = tarfile.TarInfo("%s/%s" % (dist, arcname))
            ti.size = len(data)
            ti.mode = 0o644
            t.addfile(ti, io.BytesIO(data))
    return name
