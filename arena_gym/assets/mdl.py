"""NVIDIA MDL materials (`.mdl`, as Omniverse/Isaac worlds ship them) as one tiled MuJoCo
material each.

    mdl = read_mdl("materials/Wood_Floor.mdl")      # MdlMaterial: name, image, rgba, source
    material = add_mdl_material(spec, mdl)           # a material name for geoms to use

MuJoCo has one texture slot that matters here (RGB), so of an MDL material's many inputs
the one that gives its look is taken, in this order:
1. its diffuse texture slot (`diffuse_texture`, `base_color_texture`, `albedo_texture`:
   `texture_2d("path")`),
2. else an albedo image the file references elsewhere (a quoted image path whose name says
   albedo, basecolor, base_color or diffuse),
3. else its declared diffuse colour (`diffuse_color_constant`, `base_color`,
   `diffuse_color`, `albedo_color`: `color(r, g, b)` or `color(v)`),
4. else a muted colour made from the material's name, with an AssetWarning saying so.
A texture is tiled: `texture_scale: float2(u, v)` repeats it u x v times a metre
(`texuniform`), once a metre when not declared. An image that is missing, not readable or
outside the .mdl's folder is passed over with an AssetWarning naming it, and the next step
is tried. Nothing of the file is executed: it is read as text with regular expressions.
"""

from __future__ import annotations

import colorsys
import hashlib
import io
import math
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import mujoco

from arena_gym.assets.meshes import inside
from arena_gym.errors import AssetWarning, SceneError
from arena_gym.files import check_file, read_text

ASSET_PREFIX = "mdl/"
MUTED = (0.3, 0.6)  # saturation, value of a colour made from a name
_NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)f?"
_SLOTS = re.compile(r"\b(?:diffuse_texture|base_color_texture|albedo_texture)\s*:\s*"
                    r"texture_2d\s*\(\s*\"([^\"]+)\"")
_IMAGES = re.compile(r"\"([^\"]+\.(?:png|jpe?g|tga|bmp))\"", re.IGNORECASE)
_ALBEDO = re.compile(r"albedo|base_?color|diffuse", re.IGNORECASE)
_COLOUR = re.compile(r"\b(?:diffuse_color_constant|base_color|diffuse_color|albedo_color)"
                     rf"\s*:\s*color\s*\(\s*{_NUMBER}\s*(?:,\s*{_NUMBER}\s*,\s*{_NUMBER}\s*)?\)")
_SCALE = re.compile(rf"\btexture_scale\s*:\s*float2\s*\(\s*{_NUMBER}\s*(?:,\s*{_NUMBER}\s*)?\)")
_NAME = re.compile(r"\bexport\s+material\s+(\w+)\s*\(")
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)


@dataclass(frozen=True)
class MdlMaterial:
    """What an .mdl file gives MuJoCo: `source` says which step chose it ("texture",
    "albedo", "colour" or "name")."""

    name: str
    source: str
    rgba: tuple[float, float, float, float]
    image: Path | None = None
    repeat: tuple[float, float] = (1.0, 1.0)  # texture repeats per metre


def read_mdl(path: str | Path) -> MdlMaterial:
    """The material of an .mdl file (see the module docstring for the order)."""
    path = Path(path)
    try:
        text = read_text(path, str(path), error=SceneError)
    except (OSError, UnicodeDecodeError) as exc:
        raise SceneError(f"{path}: expected a readable UTF-8 .mdl file, got {exc}") from None
    code = _COMMENTS.sub(" ", text)  # step 2 reads the raw text: a path in a comment counts
    found = _NAME.search(code)
    name = found.group(1) if found else path.stem
    repeat = _repeat(code)
    for source, refs in (("texture", _SLOTS.findall(code)),
                         ("albedo", [r for r in _IMAGES.findall(text)
                                     if _ALBEDO.search(Path(r).name)])):
        for ref in refs:
            image = _image(path, ref)
            if image is not None:
                return MdlMaterial(name, source, (1.0, 1.0, 1.0, 1.0), image, repeat)
    colour = _COLOUR.search(code)
    if colour is not None:
        r, g, b = (colour.group(1),) * 3 if colour.group(2) is None else colour.groups()
        rgb = tuple(min(max(float(v), 0.0), 1.0) for v in (r, g, b))
        return MdlMaterial(name, "colour", (*rgb, 1.0))  # type: ignore[arg-type]
    warnings.warn(f"{path.name}: material {name!r} declares no diffuse texture, albedo "
                  "image or diffuse colour; using a muted colour from its name",
                  AssetWarning, stacklevel=2)
    return MdlMaterial(name, "name", (*muted_colour(name), 1.0))  # type: ignore[arg-type]


def muted_colour(name: str) -> tuple[float, float, float]:
    """A stable, desaturated colour for a name (the same on every machine)."""
    hue = int.from_bytes(hashlib.sha256(name.encode()).digest()[:2], "big") / 65536
    return colorsys.hsv_to_rgb(hue, *MUTED)


def _repeat(code: str) -> tuple[float, float]:
    found = _SCALE.search(code)
    if found is None:
        return (1.0, 1.0)
    u = float(found.group(1))
    v = u if found.group(2) is None else float(found.group(2))
    if not (0 < u < math.inf and 0 < v < math.inf):
        return (1.0, 1.0)
    return (u, v)


def _image(mdl: Path, ref: str) -> Path | None:
    folder = mdl.resolve().parent
    image = folder / ref
    if not inside(image, (folder,)):
        warnings.warn(f"{mdl.name}: image {ref!r} lies outside the material's folder; not "
                      "used", AssetWarning, stacklevel=3)
        return None
    if not image.is_file():
        warnings.warn(f"{mdl.name}: image {ref!r} not found; not used", AssetWarning,
                      stacklevel=3)
        return None
    from PIL import Image

    try:
        check_file(image, f"image {ref!r}")
        with Image.open(image) as img:
            img.verify()
    except Exception as exc:  # PIL raises many kinds on a broken file
        warnings.warn(f"{mdl.name}: image {ref!r} is not a readable image ({exc}); not used",
                      AssetWarning, stacklevel=3)
        return None
    return image.resolve()


def add_mdl_material(spec: mujoco.MjSpec, mdl: MdlMaterial) -> str:
    """Add the material (and its texture) to `spec`; returns the material's name. Named by
    content, so materials that look alike are shared."""
    key = hashlib.sha256(repr((mdl.image and str(mdl.image), mdl.rgba, mdl.repeat))
                         .encode()).hexdigest()[:16]
    name = f"{ASSET_PREFIX}mat/{mdl.name}/{key}"
    if spec.material(name) is not None:
        return name
    material = spec.add_material(name=name, rgba=list(mdl.rgba))
    if mdl.image is not None:
        texture = f"{ASSET_PREFIX}tex/{key}"
        if spec.texture(texture) is None:
            file = f"{texture}.png"
            spec.assets = {**spec.assets, file: _png(mdl.image)}
            spec.add_texture(name=texture, file=file, type=mujoco.mjtTexture.mjTEXTURE_2D)
        material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = texture
        material.texuniform = True  # repeats per metre on every face: tiled
        material.texrepeat = list(mdl.repeat)
    return name


def _png(image: Path) -> bytes:
    """The image as PNG bytes (MuJoCo reads PNG; JPEG and others are converted)."""
    from PIL import Image

    try:
        with Image.open(image) as img:
            out = io.BytesIO()
            img.convert("RGB").save(out, format="PNG")
    except OSError as exc:
        raise SceneError(f"{image}: expected a readable image, got {exc}") from None
    return out.getvalue()
