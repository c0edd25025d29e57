"""Images in a user turn: one part type and one way in (docs/CONFIG.md#images).

Every surface that has an image - an ``@shot.png`` mention, a pasted path in the
TUI, an editor's image block over ACP, an SDK message - turns its (media type,
bytes) into an :class:`ImagePart` with :func:`image_part`, the one entry point.
The part is immutable and kept as base64 text, so a message that holds it
serialises to the same bytes on every request (cache-first), and each provider
kind writes it in its own wire shape (``provider/openai.py``, ``anthropic.py``,
``responses.py``) only for a model that takes images (:func:`model_takes_images`).

The bytes are checked, never trusted: the media type must be one the providers
take and must match the file's own signature, and the size is capped, so a
renamed binary or a huge file is a clear error rather than a 400 mid-session.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reasonix_core.errors import ReasonixError

if TYPE_CHECKING:
    from reasonix_core.config.schema import ProviderConfig

#: The media types every provider kind accepts inline.
IMAGE_MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
#: Per image, decoded (Anthropic's limit for an inline image is 5 MB).
MAX_IMAGE_BYTES = 5 * 1024 * 1024
#: File suffixes an ``@`` mention or a pasted path treats as an image.
IMAGE_SUFFIXES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}

# Official DeepSeek models that take images (wire-formats.md §1.3, §4.1): the
# preset knowledge a provider entry without ``vision_models`` falls back to.
_DEEPSEEK_VISION = frozenset(
    {"deepseek-flash", "deepseek-v4-flash", "deepseek-v4-flash-vision-exp"}
)

# Models a provider's /models listing said take images (``input_modalities``),
# per provider name: discovered metadata, learned by provider/discovery.py.
_DISCOVERED: dict[str, set[str]] = {}


class ImageError(ReasonixError):
    """Bytes that cannot go to a model as an image (type, signature or size)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ImagePart:
    """One image of a user turn, inline: its media type and its bytes as base64."""

    media_type: str
    data: str
    # Where it came from ("shot.png", "clipboard"): for notices and descriptions.
    label: str = ""

    @property
    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.data}"

    @property
    def size(self) -> int:
        """Decoded bytes."""
        return len(self.data) * 3 // 4 - self.data.count("=", -2)

    def to_record(self) -> dict[str, Any]:
        record = {"media_type": self.media_type, "data": self.data}
        if self.label:
            record["label"] = self.label
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ImagePart:
        return cls(
            media_type=str(record["media_type"]),
            data=str(record["data"]),
            label=str(record.get("label") or ""),
        )

    def note(self) -> str:
        """The text that stands in for the image where it cannot go."""
        name = f" {self.label}" if self.label else ""
        return f"[image{name}: {self.media_type}, {self.size} bytes, not shown to this model]"


def sniff_media_type(data: bytes) -> str | None:
    """The image type the bytes' own signature says, or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_part(media_type: str, data: bytes, label: str = "") -> ImagePart:
    """The one way an image enters a turn: ``data`` checked against ``media_type``
    (``""``: taken from the bytes' signature) and the size cap. ImageError else."""
    where = f"{label}: " if label else ""
    if not data:
        raise ImageError(f"{where}the image is empty")
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageError(
            f"{where}the image is {len(data)} bytes; at most {MAX_IMAGE_BYTES} are sent"
        )
    sniffed = sniff_media_type(data)
    wanted = media_type.strip().lower()
    if wanted == "image/jpg":
        wanted = "image/jpeg"
    if sniffed is None:
        kinds = ", ".join(IMAGE_MEDIA_TYPES)
        raise ImageError(f"{where}not a PNG, JPEG, GIF or WebP image (one of {kinds})")
    if wanted and wanted != sniffed:
        raise ImageError(f"{where}said to be {wanted}, but the bytes are {sniffed}")
    return ImagePart(media_type=sniffed, data=base64.b64encode(data).decode("ascii"), label=label)


def image_part_from_base64(media_type: str, data: str, label: str = "") -> ImagePart:
    """:func:`image_part` for base64 text (an editor's or an SDK's image block)."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ImageError(f"{label or 'image'}: not valid base64") from None
    return image_part(media_type, raw, label)


def learn_vision_models(provider: str, models: set[str]) -> None:
    """Record what a provider's /models listing said takes images."""
    _DISCOVERED.setdefault(provider, set()).update(models)


def model_takes_images(provider: ProviderConfig, model: str) -> bool:
    """Whether ``model`` on ``provider`` takes images: the entry's ``vision_models``
    when it has the key (the user's word wins), else its listing's metadata, else
    what the presets know of official DeepSeek models."""
    declared = provider.vision_models
    if declared is not None:
        return model in declared
    if model in _DISCOVERED.get(provider.name, ()):
        return True
    return model in _DEEPSEEK_VISION and provider.effective_reasoning_protocol() == "deepseek"
