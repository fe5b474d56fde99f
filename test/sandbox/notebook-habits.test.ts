// Notebook habits in Python sessions, in real sandboxes: display(), `!cmd`, `x = !cmd` and the
// common line magics, and values that come back as JSON, tables and text blocks.

import { describe, expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";

const t = useTestEngine({}, { python: 1, javascript: 0, bash: 0 });

const py = (code: string, sessionId?: string) => t.engine.execute({ language: "python", code, ...(sessionId ? { sessionId } : {}) });

describe("display()", () => {
  it("prints text, shows a DataFrame as a table and returns a figure as an image, in order", async () => {
    const r = await py(
      [
        "import pandas as pd, matplotlib.pyplot as plt",
        "display('hello', {'a': 1})",
        "display(pd.DataFrame({'city': ['Oslo', 'Rome'], 'temp': [3, 18]}))",
        "fig, ax = plt.subplots(); ax.plot([1, 2, 3])",
        "display(fig)",
        "print('after')",
      ].join("\n"),
    );
    expect(r.status).toBe("ok");
    expect(r.stdout).toMatch(/^'hello'\n\{'a': 1\}\n\s+city\s+temp\n0\s+Oslo\s+3\n1\s+Rome\s+18\n\n\[2 rows x 2 columns\]\nafter\n$/);
    // The figure went once, as an image, and is not sent again as a figure left open.
    expect(r.images?.map((image) => image.mime)).toEqual(["image/png"]);
  });
});

describe("IPython.display without IPython installed", () => {
  it("gives display, Markdown and Image, an image file shown as an image", async () => {
    const r = await py(
      [
        "from PIL import Image as PILImage",
        "PILImage.new('RGB', (4, 4), 'red').save('dot.png')",
        "from IPython.display import display, Markdown, Image",
        "display(Markdown('# Title'), Image(filename='dot.png'))",
        "Image('dot.png')",
      ].join("\n"),
    );
    expect(r.status).toBe("ok");
    expect(r.stdout).toBe("# Title\n");
    expect(r.images?.map((image) => image.mime)).toEqual(["image/png", "image/png"]);
  });
});

describe("shell commands and line magics", () => {
  it("runs !cmd lines and captures x = !cmd output as lines, with Python variables expanded", async () => {
    const r = await py(["name = 'world'", "!echo hello {name}", "files = !printf 'a\\nb\\n'", "print(files, files.n.upper())", "!exit 3", "_exit_code"].join("\n"));
    expect(r.status).toBe("ok");
    expect(r.stdout).toBe("hello world\n['a', 'b'] A\nB\n");
    expect(r.value).toBe(3);
  });

  it("leaves != and text inside strings and bracketed expressions alone", async () => {
    const code = ["x = 5", "s = '''", "!not a command", "%not a magic'''", "y = (17", "% 5)", "if x != 4:", "    !echo inside", "[s.splitlines()[1], y]"].join("\n");
    const r = await py(code);
    expect(r.status).toBe("ok");
    expect(r.stdout).toBe("inside\n");
    expect(r.value).toEqual(["!not a command", 2]);
  });

  it("runs a long program of % formatting and != comparisons with one shell line as the Python it is", async () => {
    const body = Array.from({ length: 3000 }, (_, i) => `s${i} = "%d!" % ${i}; t${i} = s${i} != "!x"`).join("\n");
    const r = await py(`${body}\n!echo done\n[s2999, t2999]`);
    expect(r.status).toBe("ok");
    expect(r.stdout).toBe("done\n");
    expect(r.value).toEqual(["2999!", true]);
  });

  it("runs magics inside functions and shows the line as written in a traceback", async () => {
    const r = await py(["def listing():", "    out = !echo one", "    return out", "print(listing())", "%cd /nowhere"].join("\n"));
    expect(r.stdout).toBe("['one']\n");
    expect(r.status).toBe("error");
    expect(r.error?.type).toBe("FileNotFoundError");
    expect(r.error?.traceback).toContain('main.py", line 5');
    expect(r.error?.traceback).toContain("%cd /nowhere");
    expect(r.error?.traceback).not.toContain("__sandgate_magic__");
    expect(r.error?.traceback).not.toContain("sandgate_notebook");
  });

  it("times code with %timeit and %time, the value of %time's expression being the call's value", async () => {
    const r = await py(["%timeit -n 100 -r 3 sum(range(100))", "%time sum(range(10))"].join("\n"));
    expect(r.status).toBe("ok");
    expect(r.stdout).toMatch(/^[\d.]+ (ns|µs|ms) ± [\d.]+ (ns|µs|ms|s) per loop \(mean ± std\. dev\. of 3 runs, 100 loops each\)\nCPU times: user .+, sys: .+, total: .+\nWall time: .+\n$/);
    expect(r.value).toBe(45);
  });

  it("keeps %cd, %env and the variables %who lists for the session's next calls", async () => {
    const session = t.engine.sessions.create();
    try {
      const first = await py(["!mkdir -p data", "%cd data", "%env GREETING=hi", "counter = 1"].join("\n"), session.id);
      expect(first.stdout).toBe("/workspace/data\nenv: GREETING=hi\n");
      const second = await py(["import os", "%who", "[os.environ['GREETING'], os.getcwd()]"].join("\n"), session.id);
      expect(second.stdout).toBe("counter\tos\n");
      expect(second.value).toEqual(["hi", "/workspace/data"]);
      const third = await py("%pwd", session.id);
      expect(third.value).toBe("/workspace/data");
    } finally {
      await t.engine.sessions.stop(session.id);
    }
  });

  it("answers %pip install with the no-network advice and an unknown magic with what is supported", async () => {
    const pip = await py("%pip install leftpad");
    expect(pip.stderr).toContain("pip install: no network in this sandbox: ask the admin to add leftpad");
    const unknown = await py("%load_ext autoreload");
    expect(unknown.status).toBe("error");
    expect(unknown.error?.message).toMatch(/line magic %load_ext is not supported here; supported: %timeit, .*!command/);
  });

  it("accepts %matplotlib inline as a no-op", async () => {
    const r = await py("%matplotlib inline\n1 + 1");
    expect(r).toMatchObject({ status: "ok", value: 2 });
  });
});

describe("last-expression values", () => {
  it("returns a tuple as a JSON list and a dict of tuples as JSON", async () => {
    expect((await py("(1, 'a', None)")).value).toEqual([1, "a", null]);
    const r = await py("{'point': (1.5, 2)}");
    expect(r.value).toEqual({ point: [1.5, 2] });
    expect(r.valueKind).toBe("json");
  });

  it("returns a DataFrame as a bounded text table naming its size", async () => {
    const r = await py("import pandas as pd\npd.DataFrame({'n': range(1000), 'sq': [i * i for i in range(1000)]})");
    expect(r.valueKind).toBe("repr");
    const text = String(r.value);
    expect(text).toMatch(/^\s+n\s+sq\n0\s+0\s+0\n1\s+1\s+1\n/);
    expect(text).toContain("999  999  998001");
    expect(text).toContain("[1000 rows x 2 columns]");
    expect(text.split("\n").length).toBeLessThan(30);
  });

  it("returns a Series and a numpy array as their text forms", async () => {
    const series = await py("import pandas as pd\npd.Series([1, 2], name='x')");
    expect(series.value).toBe("0    1\n1    2\nName: x, Length: 2, dtype: int64");
    const array = await py("import numpy as np\nnp.arange(4).reshape(2, 2)");
    expect(array).toMatchObject({ value: "array([[0, 1],\n       [2, 3]])", valueKind: "repr" });
  });
});

describe("tool caches", () => {
  it("keeps matplotlib's cache and config out of the workspace", async () => {
    const session = t.engine.sessions.create();
    try {
      const r = await py(["import matplotlib.pyplot as plt", "plt.plot([1, 2])", "plt.show()", "import os", "sorted(os.listdir('/workspace'))"].join("\n"), session.id);
      expect(r.status).toBe("ok");
      expect(r.images).toHaveLength(1);
      expect(r.value).toEqual([]);
    } finally {
      await t.engine.sessions.stop(session.id);
    }
  });
});

describe("cell magics on the first line", () => {
  it("write a file with %%writefile, run a shell script with %%bash and time Python with %%time", async () => {
    const session = t.engine.sessions.create();
    try {
      const written = await py("%%writefile greet.py\nprint('hi from a file')\n", session.id);
      expect(written.stdout).toBe("Writing greet.py\n");
      const shell = await py("%%bash\nset -e\nfor f in *.py; do echo \"$f\"; done\npython3 greet.py", session.id);
      expect(shell.stdout).toBe("greet.py\nhi from a file\n");
      const timed = await py("%%time\ntotal = sum(range(100))\nprint(total)\n1 / 0", session.id);
      expect(timed.stdout).toMatch(/^4950\nCPU times: .*\nWall time: .*\n$/);
      expect(timed.error?.type).toBe("ZeroDivisionError");
      expect(timed.error?.traceback).toContain('main.py", line 4');
    } finally {
      await t.engine.sessions.stop(session.id);
    }
  });
});
