import ast
import unittest

from workflow_sdk.runner.loader import CallRewriter, module_name


def rewritten(src):
    return ast.unparse(CallRewriter().visit(ast.parse(src)))


class RewriteTest(unittest.TestCase):
    def test_module_level_is_left_alone(self):
        self.assertEqual(rewritten("x = f(1)\nprint(x)"), "x = f(1)\nprint(x)")

    def test_calls_in_function_bodies(self):
        out = rewritten("def h(e):\n    return g(e, k=1)")
        self.assertIn("return _hl_call(g, e, k=1)", out)

    def test_method_calls_and_nested_calls(self):
        out = rewritten("def h(e):\n    return a.b.c(d(1), *xs, **kw)")
        self.assertIn("_hl_call(a.b.c, _hl_call(d, 1), *xs, **kw)", out)

    def test_decorators_defaults_annotations_not_rewritten(self):
        out = rewritten("@deco(1)\ndef h(e=make(), *, k: ann() = other()) -> ret():\n    pass")
        self.assertNotIn("_hl_call", out)

    def test_nested_function_defaults_and_decorators_not_rewritten(self):
        out = rewritten("def h():\n    @deco(1)\n    def inner(x=d()):\n        return g()\n    return inner")
        self.assertIn("@deco(1)", out)
        self.assertIn("x=d()", out)
        self.assertIn("return _hl_call(g)", out)

    def test_lambdas_and_comprehensions_inside_functions(self):
        out = rewritten("def h(xs):\n    f = lambda x: g(x)\n    return [k(x) for x in xs if p(x)]")
        self.assertIn("lambda x: _hl_call(g, x)", out)
        self.assertIn("[_hl_call(k, x) for x in xs if _hl_call(p, x)]", out)

    def test_module_level_comprehensions_not_rewritten_lambda_bodies_are(self):
        # A lambda's body runs when it is called (from a handler), like a def's body.
        out = rewritten("f = lambda x: g(x)\nys = [k(x) for x in xs]")
        self.assertIn("lambda x: _hl_call(g, x)", out)
        self.assertIn("ys = [k(x) for x in xs]", out)

    def test_class_bodies_not_rewritten_methods_are(self):
        out = rewritten("class C:\n    x = f()\n    def m(self):\n        return self.g()")
        self.assertIn("x = f()", out)
        self.assertIn("return _hl_call(self.g)", out)

    def test_frame_reading_calls_are_kept(self):
        out = rewritten(
            "class C(B):\n    def __init__(self):\n        super().__init__()\n"
            "        v = locals()\n        s = sys._getframe()"
        )
        self.assertIn("_hl_call(super().__init__)", out)
        self.assertIn("v = locals()", out)
        self.assertIn("s = sys._getframe()", out)

    def test_async_functions(self):
        out = rewritten("async def h(e):\n    return await c.get(u)")
        self.assertIn("await _hl_call(c.get, u)", out)

    def test_module_name(self):
        self.assertEqual(module_name("handlers.py"), "handlers")
        self.assertEqual(module_name("pkg/mod.py"), "pkg.mod")
        self.assertEqual(module_name("pkg/__init__.py"), "pkg")


if __name__ == "__main__":
    unittest.main()


class CodeInMemoryTest(unittest.TestCase):
    """A module imported anew in the same process (fresh modules) runs its code without reading it again."""

    def setUp(self):
        import os
        import shutil
        import tempfile

        self.dir = tempfile.mkdtemp(prefix="hl-loader-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.path = os.path.join(self.dir, "mod.py")
        self.write("VALUE = 1\n")

    def write(self, text, mtime_ns=None):
        import os

        with open(self.path, "w") as f:
            f.write(text)
        if mtime_ns is not None:
            os.utime(self.path, ns=(mtime_ns, mtime_ns))

    def code(self):
        from workflow_sdk.runner.loader import HookLoader
        from workflow_sdk.runner.warm import WarmHook

        return HookLoader("mod", self.path, WarmHook()).get_code("mod")

    def test_the_same_file_gives_the_same_code_without_reading_it(self):
        from unittest import mock

        from workflow_sdk.runner.loader import HookLoader

        first = self.code()
        with mock.patch.object(HookLoader, "get_data", side_effect=AssertionError("read again")):
            self.assertIs(self.code(), first)

    def test_a_changed_file_is_read_again(self):
        first = self.code()
        self.write("VALUE = 22\n", mtime_ns=1_000_000_000)
        namespace = {}
        exec(self.code(), namespace)
        self.assertIsNot(self.code(), first)
        self.assertEqual(namespace["VALUE"], 22)
