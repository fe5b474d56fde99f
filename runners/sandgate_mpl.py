# The matplotlib backend of sandboxed Python (set when user code imports pyplot): draws with Agg, and
# plt.show() or fig.show() returns each figure to the host as a PNG and closes it, as a notebook shows it.

from matplotlib.backend_bases import FigureManagerBase, _Backend
from matplotlib.backends.backend_agg import FigureCanvasAgg

import sandgate_images


class FigureManagerSandgate(FigureManagerBase):
    def show(self):
        sandgate_images.show_figure(self.canvas.figure)


class FigureCanvasSandgate(FigureCanvasAgg):
    manager_class = FigureManagerSandgate


@_Backend.export
class _BackendSandgate(_Backend):
    FigureCanvas = FigureCanvasSandgate
    FigureManager = FigureManagerSandgate
