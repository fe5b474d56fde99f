# Images a Python call returns (docs/runner-protocol.md, `image` frames): sandgate.show(), matplotlib
# figures shown or left open, and image values. Loaded on first use, so calls without images never pay for it.

import binascii
import os
import sys

import sandgate
import sandgate_frames as frames

SVG = "image/svg+xml"
# How far into an SVG document its root element may start (XML declaration, comments, doctype); the host checks the same.
SVG_ROOT_WITHIN = 4096
SHOWABLE = "a matplotlib figure or axes, a PIL image, PNG/JPEG/GIF/WebP/SVG bytes or SVG text, a path to an image file, or an MCP image content item"


def sniff(data):
    """The image type `data` (bytes) starts like, or None."""
    head = bytes(data[:12])
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if is_svg(bytes(data[:SVG_ROOT_WITHIN]).decode("utf-8", "replace")):
        return SVG
    return None


def is_svg(text):
    head = text[:SVG_ROOT_WITHIN]
    if not head.lstrip().startswith("<"):
        return False
    at = head.find("<svg")
    return at >= 0 and head[at + 4 : at + 5] in (" ", "\t", "\r", "\n", ">")


def send(data, mime):
    """Sends one image of the running call to the host; False outside a call. An image over the
    host's size limit is only named, so the host can say what was dropped without reading it."""
    run_id = sandgate._channel.run_id
    if run_id is None:
        return False
    size = len(data)
    limit = frames.max_image_bytes
    frame = {"type": "image", "id": run_id, "mime": mime}
    if limit is not None and size > limit:
        frame["size"] = size
    else:
        frame["data"] = binascii.b2a_base64(data, newline=False).decode("ascii")
    frames.send_frame(frame)  # whole even when a SIGINT arrives meanwhile
    return True


def render_figure(figure):
    import io

    buf = io.BytesIO()
    figure.savefig(buf, format="png", bbox_inches="tight")
    return buf.getvalue()


def _close(figure):
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        try:
            plt.close(figure)
        except Exception:
            pass


def show_figure(figure):
    """Sends a figure as a PNG and closes it, as a notebook does once a figure is shown."""
    try:
        send(render_figure(figure), "image/png")
    except Exception as exc:
        frames.flush_std_streams()
        frames.log_raw(f"sandgate: a matplotlib figure could not be drawn: {type(exc).__name__}: {exc}\n")
    _close(figure)


def flush_figures():
    """Sends every open pyplot figure (shown or left open) and closes it."""
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None:
        return
    try:
        managers = helpers.Gcf.get_all_fig_managers()
    except Exception:
        return
    for manager in managers:
        show_figure(manager.canvas.figure)


def _encode_pil(image):
    import io

    buf = io.BytesIO()
    try:
        image.save(buf, format="PNG")
    except (OSError, ValueError, KeyError):  # modes PNG cannot hold (CMYK, some of I;16)
        buf = io.BytesIO()
        image.convert("RGBA").save(buf, format="PNG")
    return buf.getvalue()


def _from_repr_method(value):
    """An image from the IPython display protocol (_repr_png_, _repr_jpeg_, _repr_svg_), or None."""
    kind = type(value)
    for method, mime in (("_repr_png_", "image/png"), ("_repr_jpeg_", "image/jpeg"), ("_repr_svg_", SVG)):
        fn = getattr(kind, method, None)
        if fn is None:
            continue
        out = fn(value)
        if type(out) is tuple and out:  # (data, metadata)
            out = out[0]
        if out is None:
            continue
        if isinstance(out, str):
            out = out.encode("utf-8") if mime == SVG else binascii.a2b_base64(out)
        return bytes(out), mime
    return None


def _from_content_item(item):
    """An MCP image content item ({"type": "image", "data": base64, "mimeType": ...}), or None."""
    if item.get("type") != "image" or type(item.get("data")) is not str:
        return None
    data = binascii.a2b_base64(item["data"])
    mime = item.get("mimeType")
    return data, sniff(data) or (mime if type(mime) is str else None)


def _from_file(path):
    limit = frames.max_image_bytes
    try:
        file = open(path, "rb")
    except OSError as exc:
        raise FileNotFoundError(exc.errno, f"sandgate.show(): {str(path)[:200]!r} is neither SVG text nor a readable image file ({exc.strerror})") from None
    with file:
        size = os.fstat(file.fileno()).st_size
        head = file.read(SVG_ROOT_WITHIN)
        mime = sniff(head)
        if mime is None and str(path).lower().endswith(".svg"):
            mime = SVG
        if mime is None:
            raise ValueError(f"sandgate.show(): {path} is not a PNG, JPEG, GIF, WebP or SVG image (pass mime= to say which)")
        if limit is not None and size > limit:
            return _Oversized(size), mime
        return head + file.read(), mime


class _Oversized:
    """Stands for the data of a file over the host's limit: only its size is sent."""

    def __init__(self, size):
        self.size = size

    def __len__(self):
        return self.size


def image_of(value, paths=False):
    """(data, mime) when `value` is an image, else None. `paths`: a str or path names an image file."""
    kind = type(value)
    if kind is bytes or kind is bytearray or kind is memoryview:
        mime = sniff(value)
        return (bytes(value), mime) if mime else None
    if kind is str:
        if is_svg(value):
            return value.encode("utf-8"), SVG
        return _from_file(value) if paths else None
    if kind is dict:
        return _from_content_item(value)
    if paths and isinstance(value, os.PathLike):
        return _from_file(os.fspath(value))
    module = getattr(kind, "__module__", None) or ""
    if module.startswith("matplotlib."):
        if hasattr(value, "savefig"):
            return render_figure(value), "image/png"
        figure = getattr(value, "figure", None)
        if paths and hasattr(figure, "savefig"):  # Axes: sandgate.show(ax)
            return render_figure(figure), "image/png"
        return None
    if module.startswith("PIL.") and hasattr(value, "save") and hasattr(value, "mode"):
        return _encode_pil(value), "image/png"
    return _from_repr_method(value)


def value_image(value):
    """For the last expression's value: sends it when it is an image and returns the short text that
    stands for it; returns None (and sends nothing) for any other value."""
    found = image_of(value)
    if found is None:
        return None
    data, mime = found
    if mime is None:
        return None
    send(data, mime)
    if hasattr(value, "savefig"):
        _close(value)  # shown now: not again with the figures left open
    return StandIn(f"<{mime} {len(data)} bytes>")


class StandIn:
    """What `value` shows for an image that went to the host as one (a repr, not the data)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def show(obj, mime=None):
    """Returns an image to the agent now, besides the call's text; see sandgate.show."""
    if type(obj) in (list, tuple):
        # The content list of an upstream tool's result: every image item in it.
        items = [item for item in obj if type(item) is dict and item.get("type") == "image"]
        if not items:
            raise TypeError(f"sandgate.show() got a {type(obj).__name__} without image content items; pass {SHOWABLE}")
        for item in items:
            show(item, mime)
        return
    found = image_of(obj, paths=True)
    if found is None and mime and type(obj) in (bytes, bytearray, memoryview):
        found = bytes(obj), mime  # the host checks it is what `mime` says
    if found is None:
        raise TypeError(f"sandgate.show() cannot make an image of a {type(obj).__name__}; pass {SHOWABLE}")
    data, found_mime = found
    mime = mime or found_mime
    if mime is None:
        raise ValueError("sandgate.show(): the image type is unknown; pass mime='image/png' (or jpeg, gif, webp, svg+xml)")
    send(data, mime)  # an _Oversized file is only named
    if hasattr(obj, "savefig"):
        _close(obj)


# ---- return_image / return_content: upstream MCP content passed on to the agent ----------------

# Largest base64 text sent when the host named no limit: a frame must stay under the host's 16 MiB.
_UNTOLD_LIMIT = 12 << 20


def _content_blocks(content, who):
    """The MCP content blocks of `content`: one block, a list of them, or a tool result with "content"."""
    if type(content) is dict and "type" not in content and type(content.get("content")) in (list, tuple):
        content = content["content"]
    if type(content) is dict:
        content = [content]
    if type(content) not in (list, tuple):
        raise TypeError(f"{who}() needs MCP content: a block like {{'type': 'image', 'data': ..., 'mimeType': 'image/png'}}, a list of blocks or a tool result, not {type(content).__name__}")
    for item in content:
        if type(item) is not dict or type(item.get("type")) is not str:
            raise TypeError(f"{who}() got a {type(item).__name__} where an MCP content block (a dict with a 'type') belongs")
    return content


def _send_base64(data, mime):
    """Sends base64 text as it came; the host checks it (strict base64, type, magic bytes, size) and
    says in images_note what it dropped. Text over the size limit is only named."""
    run_id = sandgate._channel.run_id
    if run_id is None:
        return
    frame = {"type": "image", "id": run_id, "mime": mime[:256] if type(mime) is str else ""}
    if type(data) is str:
        if any(c in data for c in " \t\r\n"):
            data = "".join(data.split())
        size = len(data) * 3 // 4
        limit = frames.max_image_bytes
        if size - 2 > (limit if limit is not None else _UNTOLD_LIMIT):
            frame["size"] = size
        else:
            if not frame["mime"]:
                try:
                    frame["mime"] = sniff(binascii.a2b_base64(data[:16])) or ""
                except (binascii.Error, ValueError):
                    pass
            frame["data"] = data
    frames.send_frame(frame)  # without data or size: the host counts it as refused


def _note(kind, mime, size, uri=None):
    what = " ".join(x for x in (kind, uri, f"({mime}, {size} bytes)" if mime else f"({size} bytes)") if x)
    return f"[{what} not passed on: the result carries text and images only; write it to a file in /workspace if it is needed later]\n"


def _write_text(text):
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def return_content(content, images_only=False):
    who = "return_image" if images_only else "return_content"
    blocks = _content_blocks(content, who)
    if images_only:
        images = [b for b in blocks if b["type"] == "image"]
        if not images:
            kinds = ", ".join(sorted({b["type"] for b in blocks})) or "nothing"
            raise TypeError(f"return_image() got no image block (it got {kinds}); use return_content() for other content")
        blocks = images
    for block in blocks:
        kind = block["type"]
        if kind == "image":
            _send_base64(block.get("data"), block.get("mimeType"))
        elif kind == "text":
            _write_text(str(block.get("text", "")))
        elif kind == "resource":
            res = block.get("resource") if type(block.get("resource")) is dict else {}
            mime = res.get("mimeType") if type(res.get("mimeType")) is str else ""
            if type(res.get("text")) is str:
                _write_text(res["text"])
            elif mime.startswith("image/") and type(res.get("blob")) is str:
                _send_base64(res["blob"], mime)
            else:
                blob = res.get("blob")
                _write_text(_note("resource", mime, len(blob) * 3 // 4 if type(blob) is str else 0, str(res.get("uri", ""))[:200]))
        elif kind == "resource_link":
            _write_text(f"[resource {str(block.get('uri', ''))[:500]}{' ' + str(block['name'])[:200] if block.get('name') else ''}]")
        else:
            data = block.get("data")
            mime = block.get("mimeType") if type(block.get("mimeType")) is str else ""
            _write_text(_note(kind[:40], mime[:100], len(data) * 3 // 4 if type(data) is str else 0))
