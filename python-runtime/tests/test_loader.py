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
