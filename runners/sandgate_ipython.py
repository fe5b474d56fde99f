# IPython's display API for sandboxed Python where IPython is not installed (`from IPython.display
# import display, Image, Markdown`): served as both `IPython` and `IPython.display` by the runner.

import sandgate_images


def display(*objs, **options):
    """IPython's display(): see the runner's display() (sandgate_notebook)."""
    import sandgate_notebook

    sandgate_notebook.display(objs, options)


def clear_output(wait=False):
    """Nothing to clear: output is a stream the agent reads whole."""


def get_ipython():
    return None


class Image:
    """An image from bytes or a file (`data`, `filename`), shown by display() or as the last value."""

    def __init__(self, data=None, url=None, filename=None, format=None, **options):
        if filename is None and isinstance(data, str) and sandgate_images.sniff(data.encode("utf-8", "replace")[:4096]) is None:
            filename, data = data, None
        if filename is not None:
            with open(filename, "rb") as file:
                data = file.read()
        if not isinstance(data, (bytes, bytearray)):
            raise ValueError("Image() needs image bytes or a file name (no network for a url in this sandbox)")
        self.data = bytes(data)

    def _repr_png_(self):
        return self.data if sandgate_images.sniff(self.data) == "image/png" else None

    def _repr_jpeg_(self):
        return self.data if sandgate_images.sniff(self.data) == "image/jpeg" else None

    def _repr_svg_(self):
        return self.data.decode("utf-8", "replace") if sandgate_images.sniff(self.data) == sandgate_images.SVG else None


class _Text:
    """Text display objects (Markdown, HTML, Latex...): shown as their text."""

    def __init__(self, data=None, filename=None, **options):
        if filename is not None:
            with open(filename, encoding="utf-8") as file:
                data = file.read()
        self.data = "" if data is None else str(data)

    def _repr_markdown_(self):
        return self.data

    def __repr__(self):
        return self.data


class Markdown(_Text):
    pass


class HTML(_Text):
    pass


class Latex(_Text):
    pass


class Pretty(_Text):
    pass


class SVG(Image):
    pass
